package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.response;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.OwnThreads;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: an operation gone from the journal after the wait is told PENDING (nothing sent) and the pass goes on.
 *
 * <p>Review of f7f5ce21 ("a fenced call that followed another execution reads the operation again").
 *
 * <p>{@code runSync}, for a fenced call (every operation of a one-lane {@code resumePending}, and
 * every operation of a multi-lane pass its lane does not lead), now calls
 * {@code dueAfterFollowing} after the execution it waited for ended "not begun". When the journal
 * no longer holds the operation (another instance finished it meanwhile and a purge, or the
 * in-memory journal's size bound, removed it), {@code dueAfterFollowing} throws
 * {@link IllegalArgumentException}. {@code PendingResumer.resumeOne} passes every RuntimeException
 * on, so the whole pass ends with it: {@code resumePending} throws an exception its Javadoc does
 * not list (it lists JournalException, IllegalStateException; "outcomes of single operations go
 * to their handlers instead"), and every other due operation after this one is not resumed by this
 * pass. The pass itself already handles exactly this case gracefully a moment earlier: its own
 * re-read in {@code resumeOne} skips an operation found gone ({@code current == null}) and goes on
 * with the others; the outbox path treats the same IllegalArgumentException as "vanished"
 * ({@code Deliverer}). Only the new re-read after following turns it into the end of the pass.
 *
 * <p>Staged deterministically: the app's {@code execute} of the same operation leads its flight
 * and its begin is slow, then fails (a journal error: the flight ends not begun); meanwhile the
 * one-lane pass joins that flight and waits, and another instance sharing the journal finishes the
 * operation, which a purge then removes. A second operation, due after the first, is never
 * resumed by the pass.
 *
 * <p>User-visible consequence: a startup or periodic {@code resumePending} fails with
 * "IllegalArgumentException: no such operation in the journal" because of one operation that no
 * longer needs anything, and the backlog behind it waits for the next pass (or, for a startup
 * resume that the app treats as fatal, the instance fails to start).
 */
class ResumePassGoesOnWhenOperationGoneAfterFollowingTest {
  private static final long LONG = 10;

  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal shared = new InMemoryJournal();
  private final AtomicBoolean slowBegin = new AtomicBoolean();
  private final CountDownLatch beginEntered = new CountDownLatch(1);
  private final CountDownLatch beginMayFail = new CountDownLatch(1);

  /** Once armed, the next begin (the app's execute) waits, then fails: its flight ends not begun. */
  private final ForwardingJournal journal = new ForwardingJournal(shared) {
    @Override
    public BeginResult begin(NewOperation operation) throws IdempotencyException {
      if (slowBegin.compareAndSet(true, false)) {
        beginEntered.countDown();
        try {
          beginMayFail.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        throw new JournalException("begin timed out", null);
      }
      return super.begin(operation);
    }
  };

  private final ScriptedTransport transport = new ScriptedTransport(time).otherwise(status(201));
  private final Operation first = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final Operation second = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .owner("instance-a").scheduler(time.scheduler()).build();

  @AfterEach
  void stop() {
    beginMayFail.countDown();
    idem.close();
  }

  @Test
  void anOperationGoneAfterThePassFollowedALocalExecutionDoesNotEndThePass() throws Exception {
    idem.enqueue(first);
    time.advance(Duration.ofMillis(1));
    idem.enqueue(second); // due after the first: the pass takes it next
    time.advance(Duration.ofMillis(1));

    slowBegin.set(true);
    CompletableFuture<Outcome> app = OwnThreads.supply(() -> {
      try {
        return idem.execute(first, transport);
      } catch (IdempotencyException e) {
        throw new IllegalStateException(e);
      }
    });
    assertTrue(beginEntered.await(LONG, TimeUnit.SECONDS), "the app's execute leads the flight, in its begin");

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
    assertFalse(pass.isDone(), "the pass waits for the app's execution of the first operation");

    // Meanwhile instance B, on the same journal, sends the first operation, it succeeds, its outcome
    // is handed over, and a purge removes it.
    Instant now = time.clock().instant();
    Lease b = shared.claim(first.id(), "instance-b", now, Duration.ofMinutes(1)).orElseThrow();
    shared.transition(first.id(), b, Transition.finish(OperationState.SUCCEEDED, now, response(201), "HTTP 201"));
    shared.recordOutcomeDelivered(first.id(), now);
    assertEquals(1, shared.purge(now.plusMillis(1)), "the first operation was purged");

    beginMayFail.countDown(); // the app's begin fails: the flight ends not begun, the pass starts over

    ResumeSummary summary = null;
    Throwable passFailed = null;
    try {
      summary = pass.get(LONG, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      passFailed = e.getCause() instanceof IllegalStateException ise && ise.getCause() != null
          ? ise.getCause() : e.getCause();
    }
    assertTrue(passFailed == null, "the resume pass ended with " + passFailed + " because the operation it had"
        + " waited for was purged meanwhile; the second operation, due and free, was not resumed (journal: "
        + shared.find(second.id()).map(OperationRecord::state).orElse(null) + ", sends " + transport.count()
        + ", handler told " + told + ")");
    assertEquals(OperationState.SUCCEEDED, shared.find(second.id()).orElseThrow().state(), "summary " + summary);
    // The app's call ends on its own thread, which may still be on its way out when the pass is done.
    app.handle((o, e) -> null).get(LONG, TimeUnit.SECONDS);
  }
}
