package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Found by a review on 2026-12-04.
 *
 * <p>{@link OutboxDispatcher#close()} drops the attempts still queued for a worker and tells each
 * one {@code RequestNotSentException} ("Attempts still queued for a worker were never sent: told
 * so"). But close has cancelled the delivery's future first, so {@code AsyncDriver.onAttemptDone}
 * takes its "cancelled while an attempt was on the wire" branch and records the attempt with
 * {@code release(true, ...)}: AMBIGUOUS, "interrupted while waiting for the response", whatever
 * the attempt's own failure says. The operation's history now claims an attempt that may have
 * taken effect although nothing was ever sent, and every later verdict honours that: a permanent
 * refusal by the target (a 400), or the age limit while the target is down, ends the operation
 * UNCERTAIN (reconcile by hand) instead of FAILED.
 *
 * <p>The set-up is {@link CloseDropsQueuedAttemptTest}'s (one worker, busy; a second attempt queued
 * behind it); real worker threads, so it waits on a latch, never sleeps.
 */
class DroppedAttemptRecordedAmbiguousTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  /** Opened when an operation's lease-holding transition is written (the on-the-wire attempt's release, here). */
  private final Map<OperationId, CountDownLatch> transitioned = new ConcurrentHashMap<>();
  private final Journal watched = new ForwardingJournal(journal) {
    @Override
    public OperationRecord transition(OperationId id, Lease lease, Transition transition) throws IdempotencyException {
      OperationRecord r = super.transition(id, lease, transition);
      transitioned(id).countDown();
      return r;
    }
  };

  private CountDownLatch transitioned(OperationId id) {
    return transitioned.computeIfAbsent(id, i -> new CountDownLatch(1));
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  private IdempotentExecutor executor(String owner) {
    return IdempotentExecutor.builder().journal(watched).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).owner(owner).build();
  }

  @Test
  void anAttemptDroppedFromTheWorkerQueueAtCloseIsNotRecordedAsPossiblyTakenEffect() throws Exception {
    Map<IdempotencyKey, Integer> sent = new ConcurrentHashMap<>();
    CountDownLatch firstOnTheWire = new CountDownLatch(1);
    IdempotentExecutor idem = executor("first");
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .syncWorkers(1)
        .register("create-order", (request, key) -> {
          sent.merge(key, 1, Integer::sum);
          firstOnTheWire.countDown();
          try {
            new CountDownLatch(1).await();  // blocks until interrupted
          } catch (InterruptedException e) {
            throw new InterruptedIOException("interrupted");
          }
          return FakeHost.response(201, Map.of());
        }).build().start();
    Operation first = order(1);
    Operation second = order(2);
    outbox.submit(first);
    outbox.submit(second);
    time.advance(Duration.ZERO);
    assertTrue(firstOnTheWire.await(5, TimeUnit.SECONDS));
    Operation queued = sent.containsKey(first.key()) ? second : first;
    Operation onTheWire = queued == first ? second : first;

    outbox.close();

    // The attempt that was on the wire when close cancelled it may have taken effect: ambiguous. Its
    // worker, interrupted by close, records it on its own thread.
    assertTrue(transitioned(onTheWire.id()).await(5, TimeUnit.SECONDS), "the attempt on the wire was recorded");
    List<AttemptRecord> wire = journal.find(onTheWire.id()).orElseThrow().attempts();
    assertEquals(1, wire.size(), wire.toString());
    assertTrue(wire.get(0).mayHaveTakenEffect(), "the attempt that was sent is recorded as ambiguous: " + wire);

    assertFalse(sent.containsKey(queued.key()), "the queued attempt was never sent");
    assertEquals(OperationState.PENDING, journal.find(queued.id()).orElseThrow().state());
    List<AttemptRecord> attempts = journal.find(queued.id()).orElseThrow().attempts();
    // No attempt, or one marked SAFE (not sent). Before the fix: one AMBIGUOUS attempt,
    // "interrupted while waiting for the response" (exceptionClass CancellationException).
    assertTrue(attempts.stream().noneMatch(AttemptRecord::mayHaveTakenEffect),
        "an attempt that was never sent is recorded as one that may have taken effect: " + attempts);

    // The consequence: the next deliverer's first attempt is refused for good (400), and since no
    // request with this key ever reached the target, the operation must end FAILED, not UNCERTAIN.
    idem.close();
    time.advance(Duration.ofMinutes(5));  // past the closed dispatcher's lease, if any was left
    List<OperationException> failures = new ArrayList<>();
    FakeHost refusing = new FakeHost(time, FakeHost.always(400));
    try (IdempotentExecutor next = executor("second")) {
      next.resumePending(Map.of("create-order", ResumeHandler.of(refusing, o -> {}, failures::add)));
    }
    assertEquals(OperationState.FAILED, journal.find(queued.id()).orElseThrow().state(),
        "ended " + journal.find(queued.id()).orElseThrow().state() + " (" + journal.find(queued.id()).orElseThrow()
            .reason() + ") although its only request ever sent was refused with a 400");
  }
}
