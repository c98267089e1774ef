package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A worker pool that cannot start a thread marks an attempt that never left the process as one
 * that may have reached the server.
 *
 * <p>What is wrong: {@code WorkerPoolTransport.sendAsync} treats only a
 * {@link java.util.concurrent.RejectedExecutionException} from {@code workers.execute} as "not
 * sent". A {@code ThreadPoolExecutor} (the dispatcher's own {@code newFixedThreadPool}, which starts
 * its threads lazily on {@code execute}, or one given with {@code Builder.workers}) whose thread
 * cannot be created throws {@code OutOfMemoryError: unable to create native thread} from
 * {@code execute}, before any worker exists: nothing was sent. The Error reaches the executor as if
 * the transport's send had thrown it ({@code AsyncDriver.send} -> {@code AttemptLoop.transportThrew}),
 * which, for a fatal Error, leaves the operation IN_FLIGHT (the dispatcher's handle says "it is
 * PENDING in the journal"), and the next claim owes the attempt as AMBIGUOUS ("may have been in
 * flight").
 *
 * <p>Why it matters: docs/offline.md promises an operation that no attempt can have reached the
 * server ends FAILED at its age limit, and only one that may have reached it UNCERTAIN (which needs
 * a manual reconciliation, and which a re-drive refuses to send). Here an order that never left the
 * process, whose target then stays down until the age limit, ends UNCERTAIN. The pool's refusal is
 * certain, so the transport can say so ({@code RequestNotSentException} with the Error as its cause,
 * which still lets the dispatcher stop and name it).
 *
 * <p>Fixed: the transport does, and the attempt loop records an attempt not sent because of the
 * JVM's own Error as not sent, leaves the operation PENDING, and passes the Error on unchanged
 * (NotSentForFatalErrorTest covers the other paths).
 */
class RvRoutboxWorkerStartErrorMarksUnsentAttemptAmbiguousTest {
  private static final Duration AGE_LIMIT = Duration.ofHours(1);
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).owner("only")
        .maxPendingAge(AGE_LIMIT).circuitBreaker(CircuitBreakerSettings.disabled()).build();
  }

  @Test
  void anOrderThatNeverLeftTheProcessEndsFailedNotUncertainAtItsAgeLimit() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    AtomicInteger sent = new AtomicInteger();
    Transport server = (request, key) -> {
      sent.incrementAndGet();
      return FakeHost.response(201, java.util.Map.of());
    };
    // As Executors.newFixedThreadPool, with a process at its thread limit: execute() tries to start
    // the first worker and fails before any thread exists.
    ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
      throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource"
          + " limits reached");
    });
    try (IdempotentExecutor idem = executor();
        OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
            .workers(pool).register("create-order", server).build().start()) {
      CompletableFuture<Outcome> handle = outbox.submit(op);
      time.advance(Duration.ZERO);
      assertTrue(handle.isCompletedExceptionally(), "the dispatcher stopped for the Error");
    } finally {
      pool.shutdownNow();
    }
    assertEquals(0, sent.get(), "no worker ever ran: nothing was sent");
    assertEquals(0, pool.getCompletedTaskCount());

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
        "an attempt that never reached a worker thread is recorded as one that may have reached the server: "
            + end.attempts().get(0));
    assertEquals(OperationState.FAILED, end.state(), "never sent, at its age limit: " + end.reason());
  }
}
