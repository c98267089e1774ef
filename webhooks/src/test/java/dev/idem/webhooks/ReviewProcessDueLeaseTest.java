package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review: processDue(max) claims up to max events under one lease from the moment of the claim,
 * then runs them one after the other. An event further down the batch waits for the handlers
 * before it while its lease runs out, so another processor (a started one in the same app, which
 * processDue's javadoc says it "may run beside (leases keep them apart)", or another instance on
 * PostgreSQL) claims it as a run cut short and runs it; then processDue runs it again. Each handler
 * here takes 3 minutes, well inside the 5-minute lease, as WebhookHandler asks ("keep a run shorter
 * than the processor's lease"), and an event still runs twice: the second time after it was DONE,
 * which docs/webhooks.md says never happens ("a DONE event never runs again").
 *
 * <p>One thread, fake clock: the handlers move the clock forward by their duration, and the other
 * processor's poll is a processDue made at the moment the second handler ends.
 */
class ReviewProcessDueLeaseTest {
  @TempDir
  Path dir;

  @Test
  void anEventClaimedByProcessDueRunsOnceWhenEveryHandlerIsShorterThanTheLease() {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    AtomicInteger thirdRuns = new AtomicInteger();
    AtomicReference<WebhookProcessor> other = new AtomicReference<>();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookHandler threeMinutes = e -> time.jump(Duration.ofMinutes(3));
      WebhookHandler secondThenOtherPolls = e -> {
        time.jump(Duration.ofMinutes(3));
        other.get().processDue(10); // the other processor's poll at this moment
      };
      WebhookHandler third = e -> thirdRuns.incrementAndGet();
      other.set(WebhookProcessor.builder(inbox).handler("a", threeMinutes).handler("b", threeMinutes)
          .handler("c", third).clock(time.clock()).owner("other").build());
      WebhookProcessor p = WebhookProcessor.builder(inbox).handler("a", threeMinutes).handler("b", secondThenOtherPolls)
          .handler("c", third).clock(time.clock()).owner("driver").build(); // default lease: 5 minutes
      deliver(receiver, time, "evt_a", "a");
      time.advance(Duration.ofMillis(1));
      deliver(receiver, time, "evt_b", "b");
      time.advance(Duration.ofMillis(1));
      deliver(receiver, time, "evt_c", "c");

      p.processDue(10);

      assertEquals(1, thirdRuns.get(), "evt_c ran " + thirdRuns.get() + " times, attempts "
          + inbox.attempts("acme", "evt_c").stream().map(a -> a.owner() + ":" + a.outcome().orElse("-")).toList()
          + "; its lease ran out while it waited its turn in processDue's batch, the other processor ran it to DONE,"
          + " and processDue then ran the DONE event again (\"a DONE event never runs again\")");
    }
  }
}
