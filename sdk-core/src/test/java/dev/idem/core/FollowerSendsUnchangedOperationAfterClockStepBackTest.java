package dev.idem.core;

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
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: an operation unchanged since it was read is sent as decided after the wait, whatever the clock says.
 *
 * <p>Review of f7f5ce21 ("a fenced call that followed another execution reads the operation again").
 *
 * <p>{@code dueAfterFollowing} re-reads the operation after the execution a fenced call waited for
 * ended "not begun", and refuses it ("not due: changed while this call waited ...") whenever
 * {@code DueRule.isDueFor} says no at the executor's clock now, without asking whether the
 * operation changed at all. A flight ends not begun without touching the record too: the leader's
 * begin failed (a journal timeout), its expiry failed, a resume lane's transport was missing. Then
 * the record is exactly as the pass read and decided it, and the project's own rule elsewhere is
 * that an unchanged record "is sent as the page decided: a wall clock stepped back since the page
 * read it must not leave it" ({@code PendingResumer.resumeOne}; the outbox's
 * {@code resumeAsyncCounted} says the same). {@code dueAfterFollowing} breaks that rule: with the
 * wall clock stepped back by a few milliseconds (an NTP step) while the pass waited, an operation
 * due and held by no one, unchanged since the pass read it, is not sent, its handler is told a false
 * "changed while this call waited", and the summary counts it stillPending. Before f7f5ce21 the
 * follower sent it; so does the same pass when it did not have to wait for a local execution.
 *
 * <p>User-visible consequence: a due operation is skipped by the pass (left for the next pass or
 * restart) only because an unrelated local call of it failed its begin while the clock was
 * corrected; the handler receives a misleading OperationPendingException claiming the operation
 * changed.
 */
class FollowerSendsUnchangedOperationAfterClockStepBackTest {
  private static final long LONG = 10;

  /** A wall clock that an NTP correction can step back. */
  private static final class SteppedClock extends Clock {
    private final AtomicReference<Instant> now;

    SteppedClock(Instant start) {
      this.now = new AtomicReference<>(start);
    }

    void set(Instant instant) {
      now.set(instant);
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now.get();
    }
  }

  private final VirtualTime time = new VirtualTime();
  private final Instant t0 = VirtualTime.DEFAULT_START;
  private final SteppedClock clock = new SteppedClock(t0);
  private final InMemoryJournal shared = new InMemoryJournal();
  private final AtomicBoolean slowBegin = new AtomicBoolean();
  private final CountDownLatch beginEntered = new CountDownLatch(1);
  private final CountDownLatch beginMayFail = new CountDownLatch(1);

  /** Once armed, the next begin (the app's execute) waits, then fails: its flight ends not begun, nothing written. */
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
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(clock)
      .owner("instance-a").scheduler(time.scheduler()).build();

  @AfterEach
  void stop() {
    beginMayFail.countDown();
    idem.close();
  }

  @Test
  void anUnchangedDueOperationIsSentAfterFollowingAFlightThatEndedNotBegunDespiteAClockStepBack()
      throws Exception {
    idem.enqueue(op);
    // Instance B sent it once (503) and queued it until t0 + 1 s, long ago from the pass's view.
    Lease b = shared.claim(op.id(), "instance-b", t0, Duration.ofMinutes(1)).orElseThrow();
    shared.recordAttempt(op.id(), b, new AttemptRecord(1, b.generation(), t0, t0, Classification.TRANSIENT, 503,
        null, "HTTP 503", Duration.ofSeconds(1), "retry"));
    shared.transition(op.id(), b, Transition.retryAt(t0, t0.plusSeconds(1), "HTTP 503"));
    OperationRecord asQueued = shared.find(op.id()).orElseThrow();
    clock.set(t0.plusMillis(1_005)); // due since 5 ms

    slowBegin.set(true);
    CompletableFuture<Outcome> app = OwnThreads.supply(() -> {
      try {
        return idem.execute(op, transport);
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
    assertFalse(pass.isDone(), "the pass read the operation due and waits for the app's execution of it");

    clock.set(t0.plusMillis(995)); // an NTP step of 10 ms back
    beginMayFail.countDown(); // the app's begin fails, writing nothing: the flight ends not begun

    ResumeSummary summary = pass.get(LONG, TimeUnit.SECONDS);
    OperationRecord r = shared.find(op.id()).orElseThrow();
    assertEquals(1, transport.count(), "the operation was unchanged since the pass read it due (PENDING, generation "
        + asQueued.generation() + ", due at " + asQueued.nextAttemptAt() + ", held by no one) and the execution the"
        + " pass waited for wrote nothing, yet after a 10 ms clock step back the pass refused it as 'changed while"
        + " this call waited': journal " + r.state() + ", summary " + summary + ", handler told " + told);
    assertTrue(app.isDone());
  }
}
