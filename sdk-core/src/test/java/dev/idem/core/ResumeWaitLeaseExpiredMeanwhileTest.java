package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Found by a review on 2026-12-04.
 *
 * <p>{@code resumePending(handlers, waitForLeased)} counts the operations leased by another owner
 * page by page, each page against a fresh {@code clock.instant()}, and remembers the earliest
 * expiry it saw; {@code PendingResumer.resumeWaiting} then sleeps for
 * {@code between(now, earliestExpiry) + 1 ms} with no floor. When that earliest lease expires
 * while the pass is still reading later pages (or between the count and the nap: a GC pause, a
 * slow journal), the nap is negative. The {@link dev.idem.core.spi.Sleeper} contract says "not
 * negative", and the production sleeper ({@code Thread.sleep}) throws
 * {@code IllegalArgumentException: timeout value is negative}, as {@link VirtualTime}'s sleeper
 * does here: the startup resume aborts with an IllegalArgumentException that has nothing to do
 * with the caller's input (the method documents IAE only for a negative waitForLeased), and the
 * operations whose leases just expired are not resumed.
 */
class ResumeWaitLeaseExpiredMeanwhileTest {
  private static final Duration LEASE = Duration.ofMinutes(2);

  private final VirtualTime time = new VirtualTime();

  @Test
  void aForeignLeaseThatExpiresWhileThePassStillCountsLeasesIsResumedNotAnIllegalArgumentException()
      throws Exception {
    InMemoryJournal inner = new InMemoryJournal();
    // Reading a later page of IN_FLIGHT operations takes 5 ms (a slow journal, a GC pause).
    Journal journal = new ForwardingJournal(inner) {
      @Override
      public List<OperationRecord> findByState(OperationState state, OperationId after, int limit)
          throws IdempotencyException {
        if (state == OperationState.IN_FLIGHT && after != null) {
          time.jump(Duration.ofMillis(5));
        }
        return super.findByState(state, after, limit);
      }
    };
    IdempotentExecutor dead = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .owner("pod-a").leaseFor(LEASE).build();
    // pod-a journaled 101 operations (more than one page) and died holding their leases.
    for (int i = 0; i < 101; i++) {
      Operation op = Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build();
      dead.enqueue(op);
      inner.claim(op.id(), "pod-a", time.now(), LEASE);
    }
    // pod-b starts 2 ms before those leases run out.
    time.jump(LEASE.minusMillis(2));
    IdempotentExecutor restarted = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .owner("pod-b").leaseFor(LEASE).build();
    FakeHost host = new FakeHost(time, (key, n, now) -> Reply.status(201, Map.of()));
    Map<String, ResumeHandler> handlers = Map.of("create-order", ResumeHandler.of(host, o -> {}, f -> {}));

    // Expected: the first pass sees 100 operations leased elsewhere, the nap is at most zero, and
    // the next pass resumes all 101. Before the fix: IllegalArgumentException("time does not go
    // backwards: PT-0.002S") from the sleeper, thrown out of resumePending.
    ResumeSummary summary = assertDoesNotThrow(() -> restarted.resumePending(handlers, Duration.ofMinutes(5)));

    assertEquals(101, summary.succeeded(), summary.toString());
    assertEquals(0, summary.leasedElsewhere(), summary.toString());
  }
}
