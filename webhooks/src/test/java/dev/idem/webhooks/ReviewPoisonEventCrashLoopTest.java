package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (b6e49752): the default retry policy went from 10 to 500 attempts so that its 24 h
 * deadline binds. But an event whose run kills the process (an OOM on its payload, a native crash,
 * a System.exit in a library) never records a failure, so the deadline is never consulted: only
 * {@code attempts > maxAttempts} stops it. The processor's javadoc promises "an event that kills
 * the process each time ends as a dead letter instead of looping"; with the new default it loops
 * 500 times. Under a supervisor that restarts the app (Kubernetes' CrashLoopBackOff caps at 5 min)
 * that is about 500 crashes and some 41 hours of the whole app down (an embedded inbox hands the
 * orphaned lease back at the next open, and expired leases are claimed first), instead of 10.
 *
 * <p>Each "process life" is what a processor's first poll does after a restart: claim the event
 * (a new owner, as the default owner names the pid), then die with the run unfinished. Fake clock;
 * no threads.
 */
class ReviewPoisonEventCrashLoopTest {
  @TempDir
  Path dir;

  @Test
  void anEventThatKillsTheProcessEveryTimeStillRunsAfter25HoursOfCrashLoop() {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    Duration lease = Duration.ofMinutes(5);
    AtomicInteger handed = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      deliver(receiver, time, "evt_poison", "invoice.created");

      // 25 h of crash loop, a restart every 5 minutes: each life claims the event and dies in its handler.
      int deaths = 0;
      Duration elapsed = Duration.ZERO;
      while (elapsed.compareTo(Duration.ofHours(25)) < 0) {
        long now = time.now().toEpochMilli();
        assertEquals(1, inbox.store().claim(1, "webhooks-" + (1000 + deaths) + "-crashed", now,
            now + lease.toMillis()).size(), "life " + (deaths + 1) + " claims the poison event");
        deaths++;
        time.advance(lease.plusSeconds(1));
        elapsed = elapsed.plus(lease.plusSeconds(1));
      }

      // The next restart, with the default retry policy.
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("invoice.created", e -> handed.incrementAndGet()) // in production: the process dies here again
          .clock(time.clock()).owner("webhooks-9999-restart").build();
      p.processDue(1);
      InboxEntry entry = inbox.find("acme", "evt_poison").orElseThrow();
      assertEquals(0, handed.get(), "after " + deaths + " process deaths over " + elapsed.toHours() + " h (the default"
          + " policy's deadline is 24 h from the first attempt; its old 10 attempts ended such a loop after 10"
          + " deaths) the event must be a dead letter, not handed to the handler again; actual: handed again, state "
          + entry.state() + ", attempts " + entry.attempts() + " of " + WebhookProcessor.DEFAULT_RETRY_POLICY
          .maxAttempts() + " — it keeps crashing the app until attempt 500");
      assertEquals(InboxState.DEAD, entry.state());
      p.close();
    }
  }
}
