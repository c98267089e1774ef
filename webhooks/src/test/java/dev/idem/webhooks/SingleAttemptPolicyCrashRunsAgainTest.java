package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.RetryPolicy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Regression test (review of 2026-12-08): one crash during the only attempt made a dead letter.
 *
 * The user builds a processor whose policy makes a handler's failure a dead letter at once
 * ({@code RetryPolicy.builder().maxAttempts(1)}: no retries of handler failures). An event is
 * accepted; a processor claims it and its process dies while the handler runs (a deploy's
 * SIGKILL, an OOM), so the run records no outcome. The app restarts and processes.
 *
 * <p>Expected, as documented: "At least once, not exactly once. If the process dies while the
 * handler runs ..., the handler runs again after the restart with the same eventId() and attempt()
 * one higher", and runs without an outcome "never reach the retry policy, so neither its attempts
 * ... nor its deadline stops" them; only after 10 such runs is the event a dead letter. Actual:
 * {@code WebhookProcessor.runClaimed} dead-letters it as "attempts exhausted (1 of 1)" on the first
 * claim after the restart ({@code e.attempts() > policy.maxAttempts()}), without running the
 * handler: one crash turns an event that never failed into a dead letter.
 */
class SingleAttemptPolicyCrashRunsAgainTest extends InboxOnVirtualClock {
  @Test
  void aRunTheProcessDiedDuringIsRunAgainAfterTheRestart() {
    openInbox();
    deliver(receiver(inbox, time), time, "evt_1", "invoice.created");
    // A processor claims it and dies during the handler: the claim's run never ends.
    long now = time.now().toEpochMilli();
    inbox.store().claim(1, "webhooks-1-crashed", now, now + Duration.ofMinutes(5).toMillis());
    openInbox(); // the restart: the lock proves the last owner dead, its run is recorded as interrupted

    AtomicInteger handled = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox).handler("invoice.created", e -> handled.incrementAndGet())
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).clock(time.clock()).owner("restarted").build();
    try {
      p.processDue(1);
      assertEquals(1, handled.get(), "the handler runs again after the restart; actual: the event is "
          + inbox.find("acme", "evt_1").orElseThrow().state() + ", last error "
          + inbox.find("acme", "evt_1").orElseThrow().lastError().orElse("-"));
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state());
    } finally {
      p.close();
    }
  }
}
