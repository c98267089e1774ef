package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.RetryPolicy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Regression test (review of 2026-12-08): a run discarded as stale counted as a recorded failure.
 *
 * Review of fix 91611c18 (the claim's new attempt arithmetic).
 *
 * <p>The user runs processors with {@code maxAttempts(1)}. Processor p1's handler pauses past its
 * lease; meanwhile another process claims the event and dies during its run. p1's handler then
 * returns, and its outcome is discarded as stale (the lease moved on). After the restart a
 * processor claims the event. No run ever recorded a failure: both earlier runs are runs "without
 * an outcome of their own" (one lapsed with its outcome discarded, one the process died during).
 *
 * <p>Expected (docs/webhooks.md "Runs without an outcome are bounded"; the fix's own comment:
 * "their lease lapsed and the outcome was discarded" do not count): the handler runs again.
 * Before the fix, {@code runClaimed} computes {@code recorded = attempts - 1 - store.unrecordedRuns(e)},
 * but {@code InboxStore.unrecordedRuns} does not count a run that ended {@code stale}, so the
 * lapsed run is taken for a recorded failure and the event is a dead letter, "attempts exhausted
 * (1 of 1)", without having failed once.
 */
class StaleRunIsNotARecordedFailureTest extends InboxOnVirtualClock {
  @Test
  void aRunWhoseOutcomeWasDiscardedAsStaleDoesNotSpendThePolicysOnlyAttempt() {
    openInbox();
    deliver(receiver(inbox, time), time, "evt_1", "a");
    RetryPolicy one = RetryPolicy.builder().maxAttempts(1).baseDelay(Duration.ofSeconds(1))
        .maxDelay(Duration.ofSeconds(1)).deadline(Duration.ofHours(1)).build();
    WebhookInbox first = inbox;
    WebhookProcessor p1 = WebhookProcessor.builder(first)
        .handler("a", e -> {
          time.jump(Duration.ofMinutes(6)); // paused past its 5-minute lease
          long now = time.now().toEpochMilli();
          // another process claims it meanwhile, and dies during its run
          first.store().claim(1, "webhooks-2-crashed", now, now + Duration.ofMinutes(5).toMillis());
        })
        .retryPolicy(one).clock(time.clock()).owner("p1").build();
    try {
      p1.processDue(1); // returns normally; its outcome is discarded as stale
    } finally {
      p1.close();
    }
    time.jump(Duration.ofMinutes(6));
    openInbox(); // restart

    AtomicInteger handled = new AtomicInteger();
    WebhookProcessor q = WebhookProcessor.builder(inbox).handler("a", e -> handled.incrementAndGet())
        .retryPolicy(one).clock(time.clock()).owner("restarted").build();
    try {
      q.processDue(1);
      InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
      assertEquals(1, handled.get(), "no run ever recorded a failure, so the handler runs again; actual: "
          + entry.state() + ", last error " + entry.lastError().orElse("-") + ", runs "
          + inbox.attempts("acme", "evt_1").stream().map(a -> a.owner() + ":" + a.outcome().orElse("-")
              + "/" + a.decision().orElse("-")).toList());
      assertEquals(InboxState.DONE, entry.state());
    } finally {
      q.close();
    }
  }
}
