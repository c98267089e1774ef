package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.JournalException;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: the drain check reads by state again, with no instant.
 *
 * <p>Review of bc1b2353 (the drain check of {@code shutdown(timeout)} reads "due at 2200-01-01").
 *
 * <p>The SPI documents {@code findDue}'s {@code now} as "the current time against which due times
 * and leases are compared". The drain check now passes {@code END_OF_QUEUE}, 2200-01-01, as that
 * current time. A journal of the app's own that keeps its instants in a type that ends before then
 * (a MySQL {@code TIMESTAMP} column ends at 2038-01-19T03:14:07Z, and strict mode refuses a value
 * past it; a 32-bit epoch-seconds column likewise) answers every real {@code now} and every poll
 * fine, and before this commit every drain check (findByState, no instant) too; now the drain
 * check's read fails each time. {@code checkDrained} swallows the failure (logged at DEBUG only),
 * so the drain never sees an empty queue.
 *
 * <p>User-visible consequence: with such a journal, {@code shutdown(timeout)} never completes with
 * true: every rolling deploy waits out the whole drain timeout although the queue was delivered in
 * the first second, and then reports false ("operations not delivered stay PENDING"), which is
 * untrue, with nothing above DEBUG saying why.
 */
class DrainAsksNoFarFutureTest {
  /** The last instant a MySQL TIMESTAMP column holds. */
  private static final Instant TIMESTAMP_MAX = Instant.parse("2038-01-19T03:14:07Z");

  private final VirtualTime time = new VirtualTime();
  private final AtomicReference<Instant> refused = new AtomicReference<>();
  private final ForwardingJournal timestampJournal = new ForwardingJournal(new InMemoryJournal()) {
    @Override
    public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
        throws IdempotencyException {
      if (now.isAfter(TIMESTAMP_MAX)) {
        refused.set(now);
        throw new JournalException("Data truncation: Incorrect datetime value: '" + now + "' for column"
            + " 'next_attempt_at'", null);
      }
      return super.findDue(now, owner, after, limit);
    }
  };

  @Test
  void aDrainOfADeliveredQueueEndsDrainedOnAJournalWhoseTimesEndIn2038() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(timestampJournal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    FakeHost host = new FakeHost(time, FakeHost.always(201));
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    CompletableFuture<Outcome> handle = outbox.submit(op);
    outbox.start();
    CompletableFuture<Boolean> drained = outbox.shutdown(Duration.ofMinutes(5));
    time.advance(Duration.ofMinutes(6));

    assertTrue(handle.isDone() && !handle.isCompletedExceptionally(), "delivered");
    assertEquals(OperationState.SUCCEEDED, timestampJournal.find(op.id()).orElseThrow().state());
    assertTrue(drained.isDone() && drained.join(), "the only operation was delivered at once, yet shutdown(5 min)"
        + " ended " + (drained.isDone() ? drained.join() : "not at all") + " after its whole timeout: the drain check"
        + " asked the journal for the operations due at " + refused.get() + " as its current time, which this"
        + " journal (times up to " + TIMESTAMP_MAX + ") refuses, and the failure is swallowed");
  }
}
