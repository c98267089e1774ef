package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.RetryPolicy;
import dev.idem.webhooks.internal.ClaimedEvent;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Regression test (review of 2026-12-08): runs discarded as stale were bounded by nothing.
 *
 * Review of 2cb82898 (runClaimed's claim check now reads {@code InboxStore.failedRuns}).
 *
 * <p>What the user does: processors with {@code maxAttempts(2)} share an inbox; an event's handler
 * outlives its lease every time (it ignores the watchdog's interrupt, e.g. a socket read with a
 * long timeout, and then fails): each time the lease lapses, another processor claims the event
 * again, and the first run's failure is discarded as stale. After 12 such runs (a 13th still
 * hanging) a processor claims it once more.
 *
 * <p>Expected: the event's runs are bounded (docs/webhooks.md "Runs without an outcome are
 * bounded"; runClaimed's comment: runs whose "lease lapsed and their outcome was discarded as
 * stale" are stopped by MAX_UNRECORDED_RUNS): after 12 runs that each ran the handler to its end,
 * more than both maxAttempts(2) and the 10 runs without an outcome, it is a dead letter and the
 * handler does not run again.
 *
 * <p>Before the fix, a stale run is now counted by neither bound. {@code failedRuns} counts only
 * {@code outcome = 'retry'} (0 here) and {@code unrecordedRuns} counts only never-ended or
 * 'interrupted' runs (1 here: the hanging one); before this commit the claim counted the stale
 * runs as recorded ({@code attempts - 1 - unrecorded}) and dead-lettered the event at
 * maxAttempts. Now it is run again forever, each run holding a worker past its lease.
 */
class StaleRunsAreBoundedTest extends InboxOnVirtualClock {
  @Test
  void runsWhoseOutcomesWereDiscardedAsStaleAreStillBounded() {
    openInbox();
    deliver(receiver(inbox, time), time, "evt_1", "a");
    long lease = Duration.ofMinutes(5).toMillis();
    long now = time.now().toEpochMilli();
    ClaimedEvent running = inbox.store().claim(1, "p-0", now, now + lease).get(0);
    for (int i = 1; i <= 12; i++) {
      time.jump(Duration.ofMinutes(6)); // past the lease: another processor claims it again
      now = time.now().toEpochMilli();
      List<ClaimedEvent> again = inbox.store().claim(1, "p-" + i, now, now + lease);
      assertEquals(1, again.size(), "run " + (i + 1) + " claimed");
      // the earlier run's handler finally fails: its outcome is discarded as stale
      assertEquals(false, inbox.store().scheduleRetry(running, now, now + 1000, 1000,
          "java.io.IOException: read timed out", "retry"));
      running = again.get(0);
    }
    time.jump(Duration.ofMinutes(6)); // the 13th run hangs still; its lease lapses too

    AtomicInteger handled = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("a", e -> {
          handled.incrementAndGet();
          throw new IllegalStateException("read timed out");
        })
        .retryPolicy(RetryPolicy.builder().maxAttempts(2).baseDelay(Duration.ofSeconds(1))
            .maxDelay(Duration.ofSeconds(1)).deadline(Duration.ofDays(30)).build())
        .clock(time.clock()).owner("later").build();
    try {
      p.processDue(1);
      InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
      assertEquals(0, handled.get(), "after 13 runs (12 ended stale, 1 still hanging) with maxAttempts(2), the"
          + " handler ran again; state " + entry.state() + ", attempts " + inbox.attempts("acme", "evt_1").stream()
              .map(a -> a.outcome().orElse("-")).toList());
    } finally {
      p.close();
    }
  }
}
