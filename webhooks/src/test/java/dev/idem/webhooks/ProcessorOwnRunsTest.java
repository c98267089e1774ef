package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Jitter;
import dev.idem.core.RetryPolicy;
import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A processor and the events it is running itself: never claimed again while they run, even once
 * their lease lapsed; and an event whose attempts ran out with its last run unfinished is not said
 * to have killed the process.
 *
 * <p>Fake clock and scheduler (polls and lease renewals run on the test thread); workers are real
 * threads, waited for on latches, never a sleep.
 */
class ProcessorOwnRunsTest {
  @TempDir
  Path dir;

  /**
   * The process pauses (a long GC, a suspended VM) for longer than the lease: the first poll after
   * it finds the lease of a run still going on here lapsed, before any renewal could run. It must
   * not claim that event again beside its own run; the next renewal takes the lease back, and the
   * run's success counts.
   */
  @Test
  void aRunWhoseLeaseLapsedWhileTheProcessPausedIsNotClaimedAgainBesideItself() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger runs = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("report.build", e -> {
            runs.incrementAndGet();
            entered.countDown();
            release.await();
          })
          .workers(2).lease(Duration.ofMinutes(1)).clock(time.clock()).scheduler(time.scheduler()).owner("p1")
          .build();
      try {
        p.start();
        deliver(receiver, time, "evt_1", "report.build");
        time.runDueTasks();
        assertTrue(entered.await(30, TimeUnit.SECONDS), "the run started");

        time.jump(Duration.ofSeconds(61)); // paused: no poll, no renewal ran meanwhile
        time.runDueTasks(); // the poll due first claims what expired, then the renewal runs

        assertEquals(1, inbox.attempts("acme", "evt_1").size(), "claimed once: its own run is still going on here;"
            + " attempts " + inbox.attempts("acme", "evt_1").stream().map(a -> a.owner() + ":"
            + a.outcome().orElse("running")).toList());
        release.countDown();
        spinUntil(() -> inbox.find("acme", "evt_1").orElseThrow().state() != InboxState.PROCESSING);
        assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state());
        assertEquals(List.of("done"), inbox.attempts("acme", "evt_1").stream().map(a -> a.outcome().orElse("-"))
            .toList(), "its one run counts");
        assertEquals(1, runs.get());
      } finally {
        release.countDown();
        p.close();
      }
    }
  }

  /**
   * A run whose lease lapsed (another processor claimed the event while it still ran) recorded no
   * outcome of its own when the other claimed it: like a run the process died during, it does not
   * count against the policy's attempts, so even with {@code maxAttempts(1)} the other processor
   * runs the event rather than make it a dead letter as "attempts exhausted" (which it did until
   * the review of 2026-12-08; see {@link SingleAttemptPolicyCrashRunsAgainTest}). The late run's
   * outcome is discarded as stale.
   */
  @Test
  void aRunWhoseLeaseLapsedDoesNotSpendTheLastAttemptTheOtherProcessorRunsIt() {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    RetryPolicy one = RetryPolicy.builder().maxAttempts(1).baseDelay(Duration.ofSeconds(1))
        .maxDelay(Duration.ofSeconds(1)).deadline(Duration.ofHours(1)).jitter(Jitter.FULL).build();
    AtomicReference<WebhookProcessor> other = new AtomicReference<>();
    AtomicInteger otherRuns = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      other.set(WebhookProcessor.builder(inbox).handler("a", e -> otherRuns.incrementAndGet()).retryPolicy(one)
          .clock(time.clock()).owner("other").build());
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("a", e -> {
            time.jump(Duration.ofMinutes(6)); // paused past its 5-minute lease, no renewal ran
            other.get().processDue(1); // the other processor claims it meanwhile
          })
          .retryPolicy(one).clock(time.clock()).owner("p1").build();
      deliver(receiver, time, "evt_1", "a");

      p.processDue(1);

      InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
      assertEquals(InboxState.DONE, entry.state(), entry.lastError().orElse(""));
      assertEquals(1, otherRuns.get(), "the other processor ran the event");
      assertEquals(List.of("p1:stale", "other:done"), inbox.attempts("acme", "evt_1").stream()
          .map(a -> a.owner() + ":" + a.outcome().orElse("-")).toList());
    }
  }

  private static void spinUntil(java.util.function.BooleanSupplier done) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not within 30 s");
      }
      Thread.onSpinWait();
    }
  }
}
