package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The threads a started processor owns (its poller, from the shared poll loop, and its workers)
 * are daemons, an accepted event is run without waiting for the poll interval (an hour here: the
 * start's poll or the inbox's wake-up takes it), and none of them outlives close(). Real threads:
 * the test waits on latches and joins, never a sleep. PollLoopTest proves the wake-up on fake time.
 */
class ProcessorThreadsTest {
  @TempDir
  Path dir;

  @Test
  void anAcceptedEventWakesThePollerAndNoThreadOutlivesClose() throws Exception {
    Set<Thread> before = Thread.getAllStackTraces().keySet();
    CountDownLatch handled = new CountDownLatch(1);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookReceiver receiver = WebhookReceiver.builder(WebhookSource.builder("acme",
          SignatureScheme.standardWebhooks()).secret(ReceiverTest.SECRET).build(), inbox).build();
      WebhookProcessor p = WebhookProcessor.builder(inbox).handler("order.paid", e -> handled.countDown())
          .pollInterval(java.time.Duration.ofHours(1)).build().start();
      List<Thread> owned;
      try {
        deliver(receiver, Instant.now(), "evt_1", "order.paid");
        assertTrue(handled.await(30, TimeUnit.SECONDS), "run without waiting for the hourly poll");
        owned = Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith("idem-webhooks-") && !before.contains(t)
                && !t.getName().startsWith("idem-webhooks-inbox"))  // the inbox's own, closed with it
            .toList();
        assertTrue(owned.stream().anyMatch(t -> t.getName().startsWith("idem-webhooks-poller-")), owned.toString());
        assertTrue(owned.stream().anyMatch(t -> t.getName().startsWith("idem-webhooks-worker-")), owned.toString());
        assertTrue(owned.stream().allMatch(Thread::isDaemon), "daemon threads never hold the JVM open");
      } finally {
        p.close();
      }
      for (Thread t : owned) {
        t.join(30_000);  // close() shut its pools down; a thread may take a moment to leave run()
        assertFalse(t.isAlive(), t.getName() + " outlived close()");
      }
    }
  }
}
