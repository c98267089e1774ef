package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.RetryPolicy;
import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (rv-whclose): close() cuts a run short after its grace (WorkerRuns.cutShort), and the
 * handler unwinds (a rollback, a connection closed) within close()'s 5 s hand-back wait. If the
 * run's {@linkplain WebhookProcessor.Builder#maxRunTime maximum run time} passes during that
 * unwinding (the watchdog beats until close() has finished waiting), the run is judged as one that
 * overran (runClaimed checks {@code overran} before {@code cut}): a counted, failed attempt,
 * retried or, on the event's last attempt, a dead letter. close() documents that a handler it
 * interrupted goes back to PENDING, due at once, its attempt not counted (the run was shorter than
 * the lease): the failure is the shutdown's, not the event's.
 *
 * <p>Expected: PENDING, 0 attempts, "not counted ... interrupted by the processor's close".
 * Actual: DEAD ("attempts exhausted"), the maximum run time blamed. Fake clock and scheduler; the
 * handler is held on latches and a semaphore, the worker joined, no sleep.
 */
class RvWhcloseWatchdogAfterCloseCutTest {
  @TempDir
  Path dir;

  @Test
  void aRunCloseCutShortIsHandedBackEvenIfItsMaximumRunTimePassesWhileItUnwinds() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    AtomicReference<Thread> worker = new AtomicReference<>();
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch cut = new CountDownLatch(1);
    Semaphore unwound = new Semaphore(0);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            worker.set(Thread.currentThread());
            running.countDown();
            try {
              new CountDownLatch(1).await(); // a slow call; close() interrupts it
            } catch (InterruptedException ex) {
              cut.countDown();
              unwound.acquireUninterruptibly(); // the rollback after the interrupt
              throw ex;
            }
          })
          .retryPolicy(RetryPolicy.builder().maxAttempts(1).build())
          .workers(1).maxRunTime(Duration.ofMinutes(1)).clock(time.clock()).scheduler(time.scheduler())
          .owner("p1").closeGrace(Duration.ZERO).build();
      deliver(receiver, time, "evt_1");
      p.start();
      time.runDueTasks();
      assertTrue(running.await(30, TimeUnit.SECONDS), "the handler runs");
      time.advance(Duration.ofSeconds(45)); // three watchdog beats of 15 s: within the 1 min limit

      Thread closing = new Thread(p::close, "close");
      closing.start();
      assertTrue(cut.await(30, TimeUnit.SECONDS), "close() interrupted the handler (grace zero)");
      time.advance(Duration.ofSeconds(30)); // the limit passes while the handler unwinds
      unwound.release();
      closing.join(30_000);
      assertFalse(closing.isAlive(), "close() returned");
      worker.get().join(30_000);

      InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
      HandlerAttempt run = inbox.attempts("acme", "evt_1").get(0);
      assertEquals(InboxState.PENDING, entry.state(), "close() cut the run short: handed back; actual: " + entry
          + ", run recorded as '" + run.outcome().orElse("") + "' / '" + run.decision().orElse("") + "', error "
          + run.error().orElse(""));
      assertEquals(0, entry.attempts(), "not counted");
      assertTrue(run.decision().orElse("").startsWith("not counted as an attempt"), run.toString());
    }
  }
}
