package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.testkit.webhook.WebhookSigner;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An app that gives the processor a clock that does not move ({@code Clock.fixed}, common in test
 * configuration, or a Spring {@code Clock} bean the starter picks up): a retry's due time is that
 * clock plus the delay, which the clock never reaches. Before the fix the event whose handler
 * failed once stayed PENDING forever, never retried, never DEAD, nothing said. Now the processor
 * also times each retry it schedules on its scheduler, and claims the event when that wait is over.
 *
 * <p>Scheduler: the fake one of {@link VirtualTime} (its clock moves, the processor's does not);
 * the worker is a real thread, waited for on semaphores and latches, never a sleep.
 */
class ProcessorFixedClockTest {
  @TempDir
  Path dir;

  @Test
  void aFailedHandlerIsRetriedUnderAClockThatNeverMoves() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    Clock fixed = Clock.fixed(ReceiverTest.T0, ZoneOffset.UTC);
    AtomicInteger runs = new AtomicInteger();
    Semaphore retryScheduled = new Semaphore(0);
    CountDownLatch secondRun = new CountDownLatch(1);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(fixed).open()) {
      WebhookReceiver receiver = WebhookReceiver.builder(WebhookSource.builder("acme",
          SignatureScheme.standardWebhooks()).secret(ReceiverTest.SECRET).clock(fixed).build(), inbox).build();
      byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
      Map<String, List<String>> h = new TreeMap<>();
      WebhookSigner.STANDARD_WEBHOOKS.sign(ReceiverTest.SECRET, "evt_1", "order.paid", ReceiverTest.T0, body)
          .headers().forEach((k, v) -> h.put(k, List.of(v)));
      assertEquals(200, receiver.handle("POST", h, body).status());

      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            if (runs.incrementAndGet() == 1) {
              throw new IllegalStateException("downstream busy");
            }
            secondRun.countDown();
          })
          .listener(a -> {
            if (a instanceof WebhookActivity.RetryScheduled) {
              retryScheduled.release();
            }
          })
          .random(() -> 0.5).pollInterval(Duration.ofMinutes(1)).clock(fixed).scheduler(time.scheduler()).owner("p1")
          .build();
      try {
        p.start();
        time.runDueTasks();
        assertTrue(retryScheduled.tryAcquire(30, TimeUnit.SECONDS), "the first run failed and a retry was scheduled");

        time.advance(Duration.ofHours(1)); // an hour of polls, far past the retry's delay (0.5 s here)
        assertTrue(secondRun.await(30, TimeUnit.SECONDS), "the retry ran within an hour of polls; actual: the event"
            + " is " + inbox.find("acme", "evt_1").orElseThrow().state() + " after " + runs.get() + " run(s), due at"
            + " the fixed clock plus the delay, which that clock never reaches");
        spinUntil(() -> inbox.find("acme", "evt_1").orElseThrow().state() == InboxState.DONE);
        assertEquals(2, runs.get(), "one failed run, one retry");
        assertEquals(List.of("retry", "done"), inbox.attempts("acme", "evt_1").stream()
            .map(a -> a.outcome().orElse("-")).toList());
      } finally {
        p.close();
      }
    }
  }

  static void spinUntil(java.util.function.BooleanSupplier done) {
    spinUntil(done, () -> "");
  }

  static void spinUntil(java.util.function.BooleanSupplier done, java.util.function.Supplier<String> what) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not within 30 s: " + what.get());
      }
      Thread.onSpinWait();
    }
  }
}
