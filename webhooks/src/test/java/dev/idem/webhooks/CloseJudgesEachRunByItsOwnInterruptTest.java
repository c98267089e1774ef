package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Jitter;
import dev.idem.core.RetryPolicy;
import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * close() hands back uncounted the events whose runs it cut short after its grace (their failure is
 * the shutdown's). Which runs those are was a processor-wide flag, set once close() interrupted
 * anything: every run that ended in a failure after that was taken for one close() cut short,
 * although close() had not interrupted it. Two such runs, each judged here by its inbox state
 * (state, attempts counted, last error, attempt history):
 *
 * <ul>
 *   <li>a handler that calls close() itself (allowed: its own close() waits for the other runs
 *       only, and does not interrupt it) and then throws its own failure;
 *   <li>a handler that threw its own failure while another thread's close() was starting, before
 *       close() interrupted anything: the interrupt reached the other handler, not this one.
 * </ul>
 *
 * <p>Each must be judged by its own failure (retried or dead-lettered by the processor's rules),
 * while the run close() did interrupt is still handed back uncounted. Fake clock and scheduler, a
 * grace of zero; the handlers are held on latches and the workers joined, no sleep.
 */
class CloseJudgesEachRunByItsOwnInterruptTest {
  @TempDir
  Path dir;

  private final VirtualTime time = new VirtualTime(ReceiverTest.T0);
  private final RetryPolicy policy = RetryPolicy.builder().maxAttempts(5).baseDelay(Duration.ofSeconds(10))
      .maxDelay(Duration.ofMinutes(5)).deadline(Duration.ofHours(1)).jitter(Jitter.FULL).build();

  @Test
  void aHandlerThatClosedTheProcessorAndThenFailedIsJudgedByItsOwnFailure() throws Exception {
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    CountDownLatch slowRunning = new CountDownLatch(1);
    AtomicReference<Thread> slowWorker = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            slowWorker.set(Thread.currentThread());
            slowRunning.countDown();
            new CountDownLatch(1).await(); // a slow call; close() interrupts it
          })
          .handler("app.stop", e -> {
            stopWorker.set(Thread.currentThread());
            assertTrue(slowRunning.await(30, TimeUnit.SECONDS), "the other handler runs");
            self.get().close(); // a kill switch: waits for the other run (interrupting it), not this one
            throw new PermanentWebhookException("the stop request names an unknown tenant");
          })
          .retryPolicy(policy).random(() -> 0.5).workers(2).clock(time.clock()).scheduler(time.scheduler())
          .owner("p1").closeGrace(Duration.ZERO).build();
      self.set(p);
      deliver(receiver, time, "evt_slow", "order.paid");
      deliver(receiver, time, "evt_stop", "app.stop");
      p.start();
      time.runDueTasks();
      assertTrue(slowRunning.await(30, TimeUnit.SECONDS), "the slow handler runs");
      join(slowWorker);
      join(stopWorker); // the pool is shut down: the worker leaves once its run's outcome is recorded

      InboxEntry stop = inbox.find("acme", "evt_stop").orElseThrow();
      HandlerAttempt stopRun = inbox.attempts("acme", "evt_stop").get(0);
      assertEquals(InboxState.DEAD, stop.state(), "the handler's own permanent failure makes it a dead letter, as"
          + " without its close(); actual: " + stop + ", run " + stopRun);
      assertEquals(1, stop.attempts(), "its attempt counts");
      assertEquals("dev.idem.webhooks.PermanentWebhookException: the stop request names an unknown tenant",
          stop.lastError().orElse(""));
      assertEquals("dead", stopRun.outcome().orElse(""));
      assertEquals("permanent failure", stopRun.decision().orElse(""));

      assertCutShortByClose(inbox, "evt_slow");
    }
  }

  @Test
  void aHandlerThatFailedOnItsOwnWhileAnotherThreadClosedIsJudgedByItsOwnFailure() throws Exception {
    CountDownLatch slowRunning = new CountDownLatch(1);
    CountDownLatch slowInterrupted = new CountDownLatch(1);
    AtomicReference<Thread> slowWorker = new AtomicReference<>();
    AtomicReference<Thread> failingWorker = new AtomicReference<>();
    HoldingClock clock = new HoldingClock(time.clock());
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            slowWorker.set(Thread.currentThread());
            slowRunning.countDown();
            try {
              new CountDownLatch(1).await(); // a slow call; close() interrupts it
            } catch (InterruptedException ex) {
              slowInterrupted.countDown();
              throw ex;
            }
          })
          .handler("order.failed", e -> {
            failingWorker.set(Thread.currentThread());
            // Its run is held just after the handler threw, before the processor judges the failure
            // (the processor's next clock reading): close() starts on another thread meanwhile.
            clock.holdNextReadingOn(Thread.currentThread());
            throw new IllegalStateException("the ledger API answered 503");
          })
          .retryPolicy(policy).random(() -> 0.5).workers(2).clock(clock).scheduler(time.scheduler())
          .owner("p1").closeGrace(Duration.ZERO).build();
      deliver(receiver, time, "evt_slow", "order.paid");
      deliver(receiver, time, "evt_failed", "order.failed");
      p.start();
      time.runDueTasks();
      assertTrue(slowRunning.await(30, TimeUnit.SECONDS), "the slow handler runs");
      assertTrue(clock.held.await(30, TimeUnit.SECONDS), "the failing handler threw and its run is held");

      Thread closing = new Thread(p::close, "close");
      closing.start();
      assertTrue(slowInterrupted.await(30, TimeUnit.SECONDS), "close() interrupts the slow handler after its grace");
      clock.release.release(); // the failing run goes on to record its failure
      closing.join(30_000);
      assertFalse(closing.isAlive(), "close() returned");
      join(slowWorker);
      join(failingWorker);

      InboxEntry failed = inbox.find("acme", "evt_failed").orElseThrow();
      HandlerAttempt failedRun = inbox.attempts("acme", "evt_failed").get(0);
      assertEquals(InboxState.PENDING, failed.state(), "retried: " + failed);
      assertEquals(1, failed.attempts(), "a failure of its own spends an attempt, as without the close() beside it;"
          + " actual: handed back uncounted as if close() had cut it short, run " + failedRun);
      assertEquals("java.lang.IllegalStateException: the ledger API answered 503", failed.lastError().orElse(""));
      assertEquals("retry", failedRun.outcome().orElse(""));
      assertTrue(failed.nextAttemptAt().isAfter(time.now()), "due after its backoff, not at once: " + failed);

      assertCutShortByClose(inbox, "evt_slow");
    }
  }

  /** The run close() interrupted: handed back, due at once, its attempt not counted. */
  private void assertCutShortByClose(WebhookInbox inbox, String id) {
    InboxEntry slow = inbox.find("acme", id).orElseThrow();
    HandlerAttempt slowRun = inbox.attempts("acme", id).get(0);
    assertEquals(InboxState.PENDING, slow.state(), "handed back: " + slow);
    assertEquals(0, slow.attempts(), "close() cut it short: not counted; run " + slowRun);
    assertEquals("interrupted", slowRun.outcome().orElse(""));
    assertTrue(slowRun.decision().orElse("").startsWith("not counted as an attempt"), slowRun.toString());
  }

  private static void join(AtomicReference<Thread> worker) throws InterruptedException {
    Thread t = worker.get();
    t.join(30_000);
    assertFalse(t.isAlive(), t.getName() + " left: its run's outcome is recorded");
  }
}
