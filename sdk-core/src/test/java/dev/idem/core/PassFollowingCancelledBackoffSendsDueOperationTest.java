package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.support.OwnThreads;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test: a resume pass that waited for an {@code executeAsync} cancelled in its backoff
 * was told PENDING and left the due operation unsent.
 *
 * <p>An {@code executeAsync} got a 503 and waits out its backoff; the backoff ends, its retry is
 * handed to the executor's pool, which is busy, so the retry's claim has not run. The journal holds
 * the operation PENDING and due, held by no one. A resume pass reads it, finds its flight led by that
 * execution and waits for it. The app then cancels its future (a {@code timeout()}): the execution
 * writes nothing more. Its followers were told {@link OperationPendingException} at once ("the
 * operation is PENDING and will be sent again with the same key"), and the resume pass took that
 * as the operation's outcome. Now they start over from the journal, as after a cancel that had to
 * wait for the journal, and the pass sends the due operation.
 *
 * <p>User-visible consequence (before the fix): the operation, due and held by no one, was left
 * unsent by the resume pass; its handler was told it was pending, and the summary counted it
 * stillPending, so a startup resume left a due order for the next periodic pass or restart.
 */
class PassFollowingCancelledBackoffSendsDueOperationTest {
  private static final long LONG = 10;

  private final VirtualTime time = new VirtualTime();
  private final ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "idem-test-async"));
  private final CountDownLatch poolBusy = new CountDownLatch(1);
  private final CountDownLatch poolMayGoOn = new CountDownLatch(1);
  private final InMemoryJournal journal = new InMemoryJournal();

  private final ScriptedTransport transport = new ScriptedTransport(time).then(status(503)).otherwise(status(201));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .scheduler(time.scheduler()).asyncExecutor(pool)
      .retryPolicy(RetryPolicy.builder().maxAttempts(3).baseDelay(Duration.ofSeconds(1))
          .maxDelay(Duration.ofSeconds(1)).jitter(Jitter.NONE).build())
      .build();

  @AfterEach
  void stop() {
    poolMayGoOn.countDown();
    idem.close();
    pool.shutdownNow();
  }

  @Test
  void aPassThatWaitedForACancelledExecutionSendsTheDueOperation() throws Exception {
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    assertEquals(1, transport.count());
    pool.execute(() -> {
      poolBusy.countDown();
      try {
        poolMayGoOn.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    assertTrue(poolBusy.await(LONG, TimeUnit.SECONDS));
    time.advance(Duration.ofSeconds(1)); // the backoff ends: the retry waits for the busy pool
    OperationRecord due = journal.find(op.id()).orElseThrow();
    assertEquals(OperationState.PENDING, due.state(), "due and held by no one: " + due);

    List<Object> told = new CopyOnWriteArrayList<>();
    ResumeHandler handler = ResumeHandler.of(transport, told::add, told::add);
    AtomicReference<Thread> caller = new AtomicReference<>();
    CompletableFuture<ResumeSummary> pass = OwnThreads.supply(() -> {
      caller.set(Thread.currentThread());
      try {
        return idem.resumePending(Map.of("create-order", handler));
      } catch (IdempotencyException e) {
        throw new IllegalStateException(e);
      }
    });
    while (!pass.isDone() && (caller.get() == null || caller.get().getState() != Thread.State.WAITING)) {
      Thread.onSpinWait(); // until the pass waits on the flight
    }
    assertFalse(pass.isDone(), "the pass waits for the execution in its backoff");
    assertTrue(first.cancel(true));
    poolMayGoOn.countDown();
    ResumeSummary summary = pass.get(LONG, TimeUnit.SECONDS);

    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(1, summary.succeeded(), "the operation was PENDING, due at " + due.nextAttemptAt()
        + " and held by no one once the app cancelled its execution, but the resume pass that waited for that"
        + " execution did not send it: summary " + summary + ", journal " + r.state() + " next due "
        + r.nextAttemptAt() + ", sent " + transport.count() + " time(s), handler told " + told);
  }
}
