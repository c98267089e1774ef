package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Jitter;
import dev.idem.core.RetryPolicy;
import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review: stopping the app (WebhookProcessor.close(), which the Spring starter calls at a graceful
 * shutdown) while a handler is in a call longer than close's 10 s interrupts the handler, and the
 * processor records that interrupt as the handler's own failure: it spends one of the event's
 * attempts and, on its last attempt, makes the event a dead letter. close() promises "events not
 * finished stay in the inbox", and the starter's lifecycle "an event it was running is run again
 * later"; after the restart this one never runs again unless an operator re-drives it.
 *
 * <p>Fake clock and scheduler for the polls; a close grace of zero, so close() interrupts at once
 * instead of after its default 10 s of real time. It joins the worker thread, never a sleep.
 */
class ReviewCloseInterruptTest {
  @TempDir
  Path dir;

  @Test
  void anEventInterruptedByCloseIsNotADeadLetter() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    RetryPolicy policy = RetryPolicy.builder().maxAttempts(2).baseDelay(Duration.ofSeconds(10))
        .maxDelay(Duration.ofMinutes(5)).deadline(Duration.ofHours(1)).jitter(Jitter.FULL).build();
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch firstFailed = new CountDownLatch(1);
    CountDownLatch inSecondRun = new CountDownLatch(1);
    AtomicReference<Thread> worker = new AtomicReference<>();
    WebhookListener listener = a -> {
      if (a instanceof WebhookActivity.RetryScheduled) {
        firstFailed.countDown();
      }
    };
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            if (runs.incrementAndGet() == 1) {
              throw new IllegalStateException("the payment API answered 503");
            }
            worker.set(Thread.currentThread());
            inSecondRun.countDown();
            new CountDownLatch(1).await(); // a slow call (an HTTP request, a lock) when the app is stopped
          })
          .retryPolicy(policy).random(() -> 0.5).listener(listener).workers(1)
          .clock(time.clock()).scheduler(time.scheduler()).owner("p1").closeGrace(Duration.ZERO).build();
      deliver(receiver, time, "evt_1");
      assertEquals(1, p.processDue(10)); // the first run fails, on this thread
      assertTrue(firstFailed.await(0, TimeUnit.SECONDS), "the first run failed and was scheduled again");
      time.advance(Duration.ofMinutes(1));
      p.start();
      time.runDueTasks(); // the retry is claimed onto the worker
      assertTrue(inSecondRun.await(30, TimeUnit.SECONDS), "the retry runs");

      p.close(); // the app stops: SIGTERM, a deploy
      worker.get().join(30_000); // the interrupted run's outcome is recorded before its worker leaves

      InboxState state = inbox.find("acme", "evt_1").orElseThrow().state();
      assertNotEquals(InboxState.DEAD, state, "an event whose run the shutdown cut short stays in the inbox and runs"
          + " again after the restart; actual: a dead letter, decision '"
          + inbox.attempts("acme", "evt_1").get(1).decision().orElse("") + "', error '"
          + inbox.attempts("acme", "evt_1").get(1).error().orElse("") + "'");
      InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
      assertEquals(InboxState.PENDING, entry.state(), "back in the inbox");
      assertEquals(1, entry.attempts(), "the run the shutdown cut short is not counted: only the first failure is");
      assertEquals(time.now(), entry.nextAttemptAt(), "due at once, for the next processor");
      assertEquals("interrupted", inbox.attempts("acme", "evt_1").get(1).outcome().orElse(""));

      // After the restart: it runs, and its handler's success counts.
      WebhookProcessor next = WebhookProcessor.builder(inbox).handler("order.paid", e -> { }).retryPolicy(policy)
          .clock(time.clock()).owner("p2").build();
      assertEquals(1, next.processDue(10));
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state());
    }
  }
}
