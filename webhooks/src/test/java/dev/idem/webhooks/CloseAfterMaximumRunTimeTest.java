package dev.idem.webhooks;

import static dev.idem.webhooks.ThreadFrames.parkedIn;
import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.RetryPolicy;
import dev.idem.core.testing.VirtualTime;
import dev.idem.webhooks.support.InboxRows;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The maximum run time's interrupt and close()'s, when the watchdog came FIRST (the other order is
 * {@link RvWhcloseWatchdogAfterCloseCutTest} and {@link RvWhcloseWatchdogEndsHandlersCloseTest}):
 * a run the watchdog already interrupted overran, whatever close() does after, and a handler whose
 * limit passed before it called close() itself keeps that interrupt for itself instead of ending
 * close()'s wait for the other runs. Fake clock and scheduler (a 1 min limit beats every 15 s);
 * handlers held on latches and semaphores, threads watched by state, no sleep.
 */
class CloseAfterMaximumRunTimeTest {
  @TempDir
  Path dir;

  @Test
  void aRunTheMaximumRunTimeInterruptedBeforeCloseCutTheRunsShortStillCountsAsOverran() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    AtomicReference<Thread> worker = new AtomicReference<>();
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch interrupted = new CountDownLatch(1);
    Semaphore unwound = new Semaphore(0);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            worker.set(Thread.currentThread());
            running.countDown();
            try {
              new CountDownLatch(1).await(); // hangs; the maximum run time interrupts it
            } catch (InterruptedException ex) {
              interrupted.countDown();
              unwound.acquireUninterruptibly(); // a slow rollback, during which close() comes
              throw ex;
            }
          })
          .retryPolicy(RetryPolicy.builder().maxAttempts(1).build())
          .workers(1).maxRunTime(Duration.ofMinutes(1)).clock(time.clock()).scheduler(time.scheduler())
          .owner("p1").closeGrace(Duration.ZERO).build();
      deliver(receiver, time, "evt_1", "order.paid");
      p.start();
      time.runDueTasks();
      assertTrue(running.await(30, TimeUnit.SECONDS), "the handler runs");
      time.advance(Duration.ofSeconds(75)); // five beats: the limit passed
      assertTrue(interrupted.await(30, TimeUnit.SECONDS), "the maximum run time interrupted the handler");

      Thread closing = new Thread(p::close, "close");
      closing.start();
      // Grace zero: close() cuts the runs short at once, then waits (parked) for their hand-back.
      while (!parkedIn(closing, "awaitTermination")) {
        assertTrue(closing.isAlive(), "close() waits for the run to end");
        Thread.onSpinWait();
      }
      unwound.release();
      closing.join(30_000);
      assertFalse(closing.isAlive(), "close() returned");
      worker.get().join(30_000);

      InboxEntry entry = inbox.find("acme", "evt_1").orElseThrow();
      HandlerAttempt run = inbox.attempts("acme", "evt_1").get(0);
      assertEquals(InboxState.DEAD, entry.state(), "the run overran before close() cut anything: a failed attempt,"
          + " its last; actual: " + entry + ", run recorded as '" + run.decision().orElse("") + "'");
      assertEquals(1, entry.attempts());
      assertTrue(entry.lastError().orElse("").contains("maximum run time"), entry.toString());
    }
  }

  @Test
  void aHandlerWhoseLimitPassedBeforeItClosedTheProcessorKeepsTheInterruptAndTheOthersKeepTheirGrace()
      throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    AtomicReference<Thread> slowWorker = new AtomicReference<>();
    CountDownLatch stopRunning = new CountDownLatch(1);
    Semaphore goClose = new Semaphore(0);
    CountDownLatch slowRunning = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    CountDownLatch slowInterrupted = new CountDownLatch(1);
    AtomicBoolean interruptedBeforeClose = new AtomicBoolean();
    AtomicBoolean interruptedAfterClose = new AtomicBoolean();
    CountDownLatch closeReturned = new CountDownLatch(1);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("app.stop", e -> {
            stopWorker.set(Thread.currentThread());
            stopRunning.countDown();
            goClose.acquireUninterruptibly(); // keeps the limit's interrupt pending
            interruptedBeforeClose.set(Thread.currentThread().isInterrupted());
            self.get().close(); // the kill switch, with the limit's interrupt pending
            interruptedAfterClose.set(Thread.interrupted());
            closeReturned.countDown();
          })
          .handler("order.paid", e -> {
            slowWorker.set(Thread.currentThread());
            slowRunning.countDown();
            try {
              finish.await(); // finishes within the grace
            } catch (InterruptedException ex) {
              slowInterrupted.countDown();
              throw ex;
            }
          })
          .workers(2).maxRunTime(Duration.ofMinutes(1)).clock(time.clock()).scheduler(time.scheduler())
          .owner("p1").closeGrace(Duration.ofHours(1)).build();
      self.set(p);
      deliver(receiver, time, "evt_stop", "app.stop");
      p.start();
      time.runDueTasks();
      assertTrue(stopRunning.await(30, TimeUnit.SECONDS), "the kill switch runs");
      time.advance(Duration.ofSeconds(30));
      deliver(receiver, time, "evt_slow", "order.paid");
      time.runDueTasks();
      assertTrue(slowRunning.await(30, TimeUnit.SECONDS), "the other handler runs");
      // The kill switch's limit passed, the other's did not: the watchdog beat (on this thread)
      // interrupted the kill switch, which keeps the interrupt pending (acquireUninterruptibly).
      time.advance(Duration.ofSeconds(45));
      Thread stop = stopWorker.get();

      goClose.release();
      // The handler's close() waits for the other run (it was not ended by the pending interrupt).
      while (!parkedIn(stop, "awaitOthers")) {
        assertTrue(closeReturned.getCount() > 0, "close() waits for the other run");
        Thread.onSpinWait();
      }
      finish.countDown();
      assertTrue(closeReturned.await(30, TimeUnit.SECONDS), "close() returned");
      slowWorker.get().join(30_000);
      stop.join(30_000);
      assertFalse(slowWorker.get().isAlive() || stop.isAlive(), "the workers left");

      assertTrue(interruptedBeforeClose.get(), "the limit's interrupt was pending when the handler called close()");
      assertTrue(interruptedAfterClose.get(), "close() gave the handler its interrupt back");
      assertEquals(1, slowInterrupted.getCount(), "the other handler was not interrupted");
      InboxEntry slow = inbox.find("acme", "evt_slow").orElseThrow();
      assertEquals(InboxState.DONE, slow.state(), slow.toString());
      assertEquals(1, slow.attempts());
      // The kill switch returned normally despite the interrupt: it succeeded (see maxRunTime).
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_stop").orElseThrow().state());
    }
  }

  /**
   * A handler whose maximum run time passed (its lease abandoned, so that a hung handler frees its
   * event) and which then closes the processor itself is no longer a hung handler: it waits in
   * close() for the other runs, through a grace (1 h) much longer than the lease (1 min), and then
   * finishes. Its lease must stay its own meanwhile: another processor on the same inbox must not
   * claim the event and run it beside it (the receiver promises each event processed once).
   */
  @Test
  void aHandlerWhoseLimitPassedKeepsItsLeaseWhileItWaitsInItsOwnClose() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    AtomicReference<Thread> slowWorker = new AtomicReference<>();
    CountDownLatch stopRunning = new CountDownLatch(1);
    Semaphore goClose = new Semaphore(0);
    CountDownLatch slowRunning = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    CountDownLatch closeReturned = new CountDownLatch(1);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p1 = WebhookProcessor.builder(inbox)
          .handler("app.stop", e -> {
            ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
            stopWorker.set(Thread.currentThread());
            stopRunning.countDown();
            goClose.acquireUninterruptibly(); // past its limit: interrupted, its lease abandoned
            self.get().close(); // the kill switch: waits for the other run, within the grace
            Thread.interrupted(); // the limit's interrupt, given back: this handler does not care
            closeReturned.countDown();
          })
          .handler("order.paid", e -> {
            ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
            slowWorker.set(Thread.currentThread());
            slowRunning.countDown();
            finish.await(); // a call that finishes within the grace
          })
          .workers(2).maxRunTime(Duration.ofMinutes(4)).lease(Duration.ofMinutes(1))
          .pollInterval(Duration.ofHours(1)).clock(time.clock()).scheduler(time.scheduler())
          .owner("p1").closeGrace(Duration.ofHours(1)).build();
      self.set(p1);
      // Another instance sharing the inbox, driven by this thread.
      WebhookHandler counting = e -> ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
      WebhookProcessor p2 = WebhookProcessor.builder(inbox).handler("app.stop", counting)
          .handler("order.paid", counting).lease(Duration.ofMinutes(1)).clock(time.clock())
          .scheduler(time.scheduler()).owner("p2").build();
      deliver(receiver, time, "evt_stop", "app.stop");
      p1.start();
      time.runDueTasks();
      assertTrue(stopRunning.await(30, TimeUnit.SECONDS), "the kill switch runs");
      time.advance(Duration.ofMinutes(3)); // three watchdog beats (one a minute)
      deliver(receiver, time, "evt_slow", "order.paid");
      time.runDueTasks();
      assertTrue(slowRunning.await(30, TimeUnit.SECONDS), "the other handler runs");
      time.advance(Duration.ofMinutes(2)); // the fifth beat: the kill switch's limit passed, not the other's
      Thread stop = stopWorker.get();

      goClose.release();
      while (!parkedIn(stop, "awaitOthers")) {
        assertTrue(closeReturned.getCount() > 0, "close() waits for the other run");
        Thread.onSpinWait();
      }
      // Two leases later (the other run is still within its limit and the grace): whoever looks
      // for due events now must not find the kill switch's, whose handler is still running here.
      time.advance(Duration.ofMinutes(2));
      String holder = InboxRows.leaseHolder(dir, "acme", "evt_stop");
      int ranByOther = p2.processDue(10);

      finish.countDown();
      assertTrue(closeReturned.await(30, TimeUnit.SECONDS), "close() returned");
      slowWorker.get().join(30_000);
      stop.join(30_000);
      assertFalse(slowWorker.get().isAlive() || stop.isAlive(), "the workers left");
      p2.close();

      InboxEntry entry = inbox.find("acme", "evt_stop").orElseThrow();
      assertEquals(1, ran.get("evt_stop").get(), "the kill switch's event ran beside its handler, waiting in"
          + " close(): lease at that moment " + holder + " (now " + time.now().toEpochMilli() + "), " + entry);
      assertEquals(0, ranByOther, "the other processor found nothing due");
      assertTrue(holder.startsWith("p1@") && Long.parseLong(holder.substring(3)) > time.now().toEpochMilli(),
          "the kill switch's lease is still p1's while its close() waits: " + holder);
      assertEquals(InboxState.DONE, entry.state(), entry.toString());
      assertEquals(1, entry.attempts(), entry.toString());
      assertEquals(1, entry.runs(), entry.toString());
      InboxEntry slow = inbox.find("acme", "evt_slow").orElseThrow();
      assertEquals(InboxState.DONE, slow.state(), slow.toString());
      assertEquals(1, ran.get("evt_slow").get());
    }
  }
}
