package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 15: an Error (OutOfMemoryError, StackOverflowError, a transport's or a callback's own)
 * used to end unseen in a future on the dispatcher's threads: a delivery's handle hung, and the
 * poller's Error was swallowed by its executor. Now it stops the dispatcher, which says so, and
 * every later submit and every open handle fails with an exception that names the Error; the
 * operations stay in the journal.
 */
class OutboxErrorTest {
  /** The Error the tests inject. */
  static final class InjectedError extends Error {
    InjectedError() {
      super("injected");
    }
  }

  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor(Journal j) {
    return IdempotentExecutor.builder().journal(j).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run)
        .sleeper(time.sleeper()).random(() -> 0.5).build();
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  private static Throwable failure(CompletableFuture<?> f) {
    assertTrue(f.isDone(), "not completed yet: a hanging handle");
    return assertThrows(ExecutionException.class, f::get).getCause();
  }

  private static void assertNames(Throwable t, String name) {
    assertTrue(String.valueOf(t.getMessage()).contains(name), "names the Error: " + t);
  }

  @Test
  void anErrorFromTheTransportStopsTheDispatcherAndNamesItInsteadOfAHangingHandle() throws Exception {
    InjectedError error = new InjectedError();
    AtomicInteger sent = new AtomicInteger();
    AsyncTransport failing = (request, key) -> {
      sent.incrementAndGet();
      return CompletableFuture.failedFuture(error);  // as a worker pool's supplyAsync reports it
    };
    OutboxDispatcher outbox = OutboxDispatcher.builder(executor(journal)).clock(time.clock())
        .scheduler(time.scheduler()).registerAsync("create-order", failing).build().start();
    Operation op = order(1);
    CompletableFuture<Outcome> handle = outbox.submit(op);

    time.advance(Duration.ZERO);

    assertEquals(1, sent.get());
    Throwable f = failure(handle);
    assertInstanceOf(OperationPendingException.class, f);
    assertNames(f, "InjectedError");
    assertSame(error, f.getCause());
    Throwable refused = failure(outbox.submit(order(2)));
    assertInstanceOf(IllegalStateException.class, refused);
    assertNames(refused, "InjectedError");
    OperationRecord left = journal.find(op.id()).orElseThrow();
    assertTrue(left.state() == OperationState.PENDING || left.state() == OperationState.IN_FLIGHT, left.state().name());
    assertTrue(journal.find(order(2).id()).isEmpty(), "refused before the journal");
  }

  @Test
  void anErrorFromAnOutcomeCallbackStopsTheDispatcher() throws Exception {
    FakeHost host = new FakeHost(time, FakeHost.always(201));
    OutboxDispatcher outbox = OutboxDispatcher.builder(executor(journal)).clock(time.clock())
        .scheduler(time.scheduler()).registerAsync("create-order", host, o -> {
          throw new InjectedError();
        }, e -> {}).build().start();
    Operation op = order(1);
    CompletableFuture<Outcome> handle = outbox.submit(op);

    time.advance(Duration.ZERO);

    assertEquals(op.key(), handle.get().key(), "the handle completed before the callback ran");
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    assertNames(failure(outbox.submit(order(2))), "InjectedError");
  }

  @Test
  void anErrorInThePollerStopsTheDispatcherInsteadOfEndingUnseenInTheScheduler() throws Exception {
    InjectedError error = new InjectedError();
    Journal broken = new ForwardingJournal(journal) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
          int limit) throws IdempotencyException {
        throw error;
      }
    };
    OutboxDispatcher outbox = OutboxDispatcher.builder(executor(broken)).clock(time.clock())
        .scheduler(time.scheduler()).registerAsync("create-order", new FakeHost(time, FakeHost.always(201)))
        .build().start();
    Operation op = order(1);
    CompletableFuture<Outcome> handle = outbox.submit(op);

    time.advance(Duration.ZERO);  // the poll runs here; before, its Error escaped into the scheduler

    Throwable f = failure(handle);
    assertNames(f, "InjectedError");
    assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state(), "left for the next dispatcher");
    assertNames(failure(outbox.submit(order(2))), "InjectedError");
    assertEquals(0, time.pendingTasks(), "no poll is scheduled any more");
  }
}
