package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.net.ConnectException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@code WorkerPoolTransport.sendAsync}, when the pool's {@code execute} throws an Error, decides
 * by {@code attempt.notSent(..)} returning false that "a worker took it" and rethrows the Error as
 * the transport's own. But the flag is also won by {@code close()} dropping the attempt (262ddf7b:
 * {@code WorkerPoolTransport.close()} -> {@code Attempt.dropped()}), or by an attempt-timeout cancel
 * ({@code NotStartedAware.cancel}). When the dispatcher closes while {@code execute} is failing
 * (here: the app-given pool's {@code execute} is where close() happens, standing for a close on
 * another thread at that moment), the attempt is certainly not sent, yet the Error is thrown out of
 * {@code sendAsync}; {@code AsyncDriver.send} takes it for an Error of the send itself
 * ({@code AttemptLoop.transportThrew}): the operation stays IN_FLIGHT and the next claim owes the
 * attempt as AMBIGUOUS.
 *
 * <p>Why it matters: that is the outcome 010880f2 fixed for the plain case (docs/client.md: an
 * operation that never left the process "can still end FAILED, not UNCERTAIN, at its age limit"):
 * here an order that never left the process ends UNCERTAIN at its age limit, needing a manual
 * reconciliation, and is left IN_FLIGHT instead of PENDING after close().
 */
class RvRtoday4DroppedThenPoolErrorOwedAmbiguousTest {
  private static final Duration AGE_LIMIT = Duration.ofHours(1);
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).owner("only")
        .maxPendingAge(AGE_LIMIT).circuitBreaker(CircuitBreakerSettings.disabled()).build();
  }

  @Test
  void anAttemptDroppedByCloseWhilePoolExecuteFailsIsNotOwedAsAmbiguous() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    AtomicInteger sent = new AtomicInteger();
    Transport server = (request, key) -> {
      sent.incrementAndGet();
      return FakeHost.response(201, Map.of());
    };
    AtomicReference<OutboxDispatcher> dispatcher = new AtomicReference<>();
    // The pool fails to start a worker; meanwhile the dispatcher closes (here, at that very point).
    Executor appPool = task -> {
      dispatcher.get().close();
      throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource"
          + " limits reached");
    };
    try (IdempotentExecutor idem = executor()) {
      OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
          .workers(appPool).register("create-order", server).build();
      dispatcher.set(outbox);
      outbox.start();
      outbox.submit(op);
      time.advance(Duration.ZERO);
      outbox.close();
    }
    assertEquals(0, sent.get(), "no worker ever ran: nothing was sent");
    OperationRecord afterClose = journal.find(op.id()).orElseThrow();

    // The process restarts (same owner name); the target is down until past the age limit.
    FakeHost down = new FakeHost(time, (k, n, t) -> FakeHost.Reply.fail(new ConnectException("Connection refused")));
    try (IdempotentExecutor next = executor()) {
      time.advance(Duration.ofMinutes(10));
      assertThrows(OperationPendingException.class, () -> next.resume(op.id(), (Transport) down));
      time.advance(AGE_LIMIT);
      assertThrows(OperationException.class, () -> next.resume(op.id(), (Transport) down));
    }
    OperationRecord end = journal.find(op.id()).orElseThrow();
    assertFalse(end.attempts().stream().anyMatch(AttemptRecord::mayHaveReachedServer),
        "an attempt that close() dropped unsent is owed as one that may have reached the server: "
            + end.attempts().get(0) + " (after close the journal held " + afterClose.state() + ")");
    assertEquals(OperationState.FAILED, end.state(), "never sent, at its age limit: " + end.reason());
  }
}
