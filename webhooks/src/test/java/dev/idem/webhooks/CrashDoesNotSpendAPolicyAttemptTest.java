package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.RetryPolicy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Regression test (review of 2026-12-08): a crashed run still took one of the policy's retries.
 *
 * Review of fix 91611c18 (decide() after a crash-rerun failure).
 *
 * <p>The user builds a processor with {@code RetryPolicy.builder().maxAttempts(2)}: a failing
 * handler is run twice before it is a dead letter. An event is accepted, a processor claims it and
 * its process dies during the handler (no outcome recorded). After the restart the handler runs
 * again and throws once.
 *
 * <p>Expected (docs/webhooks.md, "Runs without an outcome are bounded": such a run "never reaches
 * the retry policy, so neither its attempts ... stops it"; the fix: "Only runs that recorded a
 * failure count"): one recorded failure of the policy's two, so the event is retried (PENDING).
 * Before the fix, {@code WebhookProcessor.decide} hands the policy {@code e.attempts()}, which still counts
 * the crashed run, so the first recorded failure is judged "attempts exhausted (2 of 2)" and the
 * event is a dead letter after a single failure.
 */
class CrashDoesNotSpendAPolicyAttemptTest extends InboxOnVirtualClock {
  @Test
  void aFailureAfterACrashedRunIsRetriedWhenThePolicyAllowsTwoFailures() {
    openInbox();
    deliver(receiver(inbox, time), time, "evt_1", "invoice.created");
    long now = time.now().toEpochMilli();
    inbox.store().claim(1, "webhooks-1-crashed", now, now + Duration.ofMinutes(5).toMillis());
    openInbox(); // restart: the crashed run is recorded as interrupted, without an outcome

    AtomicInteger handled = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("invoice.created", e -> {
          handled.incrementAndGet();
          throw new IllegalStateException("downstream unavailable");
        })
        .retryPolicy(RetryPolicy.builder().maxAttempts(2).baseDelay(Duration.ofSeconds(1))
            .maxDelay(Duration.ofSeconds(1)).deadline(Duration.ofHours(1)).build())
        .clock(time.clock()).owner("restarted").build();
    try {
      p.processDue(1);
      assertEquals(1, handled.get());
      InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
      assertEquals(InboxState.PENDING, entry.state(), "one recorded failure of maxAttempts(2) is retried; last error "
          + entry.lastError().orElse("-") + ", attempts " + inbox.attempts("acme", "evt_1").stream()
              .map(a -> a.outcome().orElse("-") + "/" + a.decision().orElse("-")).toList());
    } finally {
      p.close();
    }
  }
}
