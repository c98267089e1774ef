package dev.idem.webhooks;

import static dev.idem.webhooks.ThreadFrames.parkedIn;
import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.webhooks.support.InboxRows;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A handler's own close() waits for the other runs (it cannot wait for the pool: its own run is one
 * of its tasks). A run a poll had handed to a worker that had not begun it yet (the worker not yet
 * started, or busy finishing the run before) is one of them: close()'s shutdown of the pool lets it
 * run, so it must be waited for like a running one, whether it then runs (within the grace: its
 * lease renewed and its maximum run time timed, as any run's) or, queued past close()'s cut, hands
 * its event back. Otherwise it began, or wrote its hand-back, after close() had returned: with no
 * lease renewal (another processor ran the event beside it) and no watchdog.
 *
 * <p>The worker that takes the run is held before its first task by the processor's thread factory
 * ({@link HeldWorkerThreads}); fake clock and scheduler; the handler's close() is seen waiting by
 * its thread's state, no sleep. Each test reads the inbox from the closing handler the moment its
 * close() returned: the other runs must have ended and recorded their outcome by then.
 */
class CloseFromHandlerQueuedRunTest {
  @TempDir
  Path dir;

  /**
   * The queued run is released once close() is seen waiting (or has returned: the defect), and
   * runs past two leases; another processor sharing the inbox looks for due events meanwhile.
   */
  @Test
  void aRunHandedToAWorkerBeforeAHandlersCloseIsWaitedForAndKeepsItsLease() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    HeldWorkerThreads threads = new HeldWorkerThreads();
    Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<WebhookInbox> inboxRef = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    AtomicReference<Thread> paidWorker = new AtomicReference<>();
    AtomicReference<String> paidWhenCloseReturned = new AtomicReference<>();
    CountDownLatch stopRunning = new CountDownLatch(1);
    Semaphore goClose = new Semaphore(0);
    CountDownLatch paidRunning = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    CountDownLatch closeReturned = new CountDownLatch(1);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      inboxRef.set(inbox);
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p1 = WebhookProcessor.builder(inbox)
          .handler("app.stop", e -> {
            ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
            stopWorker.set(Thread.currentThread());
            stopRunning.countDown();
            goClose.acquireUninterruptibly();
            self.get().close(); // the kill switch: waits for the other runs
            paidWhenCloseReturned.set(inboxRef.get().find("acme", "evt_paid").orElseThrow().toString());
            closeReturned.countDown();
          })
          .handler("order.paid", e -> {
            ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
            paidWorker.set(Thread.currentThread());
            paidRunning.countDown();
            finish.await(); // a call that finishes within the grace, but outlasts two leases
          })
          .workers(2).lease(Duration.ofMinutes(1)).pollInterval(Duration.ofHours(1)).clock(time.clock())
          .scheduler(time.scheduler()).owner("p1").closeGrace(Duration.ofHours(1)).workerThreads(threads).build();
      self.set(p1);
      WebhookHandler counting = e -> ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
      WebhookProcessor p2 = WebhookProcessor.builder(inbox).handler("app.stop", counting)
          .handler("order.paid", counting).lease(Duration.ofMinutes(1)).clock(time.clock())
          .scheduler(time.scheduler()).owner("p2").build();
      deliver(receiver, time, "evt_stop", "app.stop");
      p1.start();
      time.runDueTasks();
      assertTrue(stopRunning.await(30, TimeUnit.SECONDS), "the kill switch runs");
      threads.holdNext();
      deliver(receiver, time, "evt_paid", "order.paid");
      time.runDueTasks();
      assertTrue(threads.held.await(30, TimeUnit.SECONDS), "the other event is handed to a worker, not yet begun");
      assertTrue(InboxRows.leaseHolder(dir, "acme", "evt_paid").startsWith("p1@"), "claimed by p1");

      goClose.release();
      Thread stop = stopWorker.get();
      awaitReturnedOrWaiting(stop, closeReturned);
      threads.release();
      assertTrue(paidRunning.await(30, TimeUnit.SECONDS), "the queued run begins");
      // Two leases on (the run is within its grace and its maximum run time): whoever looks for due
      // events now must not find the event whose handler is still running here.
      time.advance(Duration.ofMinutes(2));
      String holder = InboxRows.leaseHolder(dir, "acme", "evt_paid");
      int ranByOther = p2.processDue(10);

      finish.countDown();
      assertTrue(closeReturned.await(30, TimeUnit.SECONDS), "close() returned");
      p1.close(); // the app's own close(), then the inbox's (try-with-resources)
      stop.join(30_000);
      paidWorker.get().join(30_000);
      assertFalse(stop.isAlive() || paidWorker.get().isAlive(), "the workers left");
      p2.close();

      InboxEntry paid = inbox.find("acme", "evt_paid").orElseThrow();
      assertEquals(1, ran.get("evt_paid").get(), "the queued event ran beside its run on p1: lease at that moment "
          + holder + " (now " + time.now().toEpochMilli() + "), " + paid);
      assertEquals(0, ranByOther, "the other processor found nothing due");
      assertTrue(paidWhenCloseReturned.get().contains("state=DONE"), "the handler's close() returned before the"
          + " run it had been handed ended: " + paidWhenCloseReturned.get());
      assertEquals(InboxState.DONE, paid.state(), paid.toString());
      assertEquals(1, paid.attempts(), paid.toString());
      assertEquals(1, paid.runs(), paid.toString());
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_stop").orElseThrow().state());
      assertEquals(1, ran.get("evt_stop").get());
    }
  }

  /**
   * Grace zero: the handler's close() cuts the other run short at once; the queued run, let go
   * after that, must not begin, and hands its event back (due now, its attempt not counted) before
   * close() returns.
   */
  @Test
  void aRunQueuedPastTheCutOfAHandlersCloseHandsItsEventBackBeforeCloseReturns() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    HeldWorkerThreads threads = new HeldWorkerThreads();
    Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<WebhookInbox> inboxRef = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    AtomicReference<Thread> slowWorker = new AtomicReference<>();
    AtomicReference<InboxEntry> paidWhenCloseReturned = new AtomicReference<>();
    CountDownLatch stopRunning = new CountDownLatch(1);
    Semaphore goClose = new Semaphore(0);
    CountDownLatch slowRunning = new CountDownLatch(1);
    CountDownLatch closeReturned = new CountDownLatch(1);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      inboxRef.set(inbox);
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox)
          .handler("app.stop", e -> {
            stopWorker.set(Thread.currentThread());
            stopRunning.countDown();
            goClose.acquireUninterruptibly();
            self.get().close(); // grace zero: cuts the other run short, then waits for the hand-backs
            paidWhenCloseReturned.set(inboxRef.get().find("acme", "evt_paid").orElseThrow());
            closeReturned.countDown();
          })
          .handler("order.slow", e -> {
            slowWorker.set(Thread.currentThread());
            slowRunning.countDown();
            new CountDownLatch(1).await(); // hangs until close() interrupts it
          })
          .handler("order.paid", e -> ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet())
          .workers(3).pollInterval(Duration.ofHours(1)).clock(time.clock()).scheduler(time.scheduler()).owner("p1")
          .closeGrace(Duration.ZERO).workerThreads(threads).build();
      self.set(p);
      deliver(receiver, time, "evt_stop", "app.stop");
      p.start();
      time.runDueTasks();
      assertTrue(stopRunning.await(30, TimeUnit.SECONDS), "the kill switch runs");
      deliver(receiver, time, "evt_slow", "order.slow");
      time.runDueTasks();
      assertTrue(slowRunning.await(30, TimeUnit.SECONDS), "the slow handler runs");
      threads.holdNext();
      deliver(receiver, time, "evt_paid", "order.paid");
      time.runDueTasks();
      assertTrue(threads.held.await(30, TimeUnit.SECONDS), "the third event is handed to a worker, not yet begun");

      goClose.release();
      Thread stop = stopWorker.get();
      // The cut run hands its event back and its worker leaves (the pool is shut down, its queue
      // empty): all that is left for close() to wait for is the queued run.
      slowWorker.get().join(30_000);
      assertFalse(slowWorker.get().isAlive(), "the cut run ended");
      awaitReturnedOrWaiting(stop, closeReturned);
      threads.release();
      assertTrue(closeReturned.await(30, TimeUnit.SECONDS), "close() returned");
      p.close(); // the app's own close(), then the inbox's (try-with-resources)
      stop.join(30_000);
      assertFalse(stop.isAlive(), "the kill switch's worker left");

      InboxEntry atReturn = paidWhenCloseReturned.get();
      assertEquals(InboxState.PENDING, atReturn.state(), "the handler's close() returned before the queued run"
          + " handed its event back: " + atReturn);
      InboxEntry paid = inbox.find("acme", "evt_paid").orElseThrow();
      assertEquals(InboxState.PENDING, paid.state(), paid.toString());
      assertEquals(0, paid.attempts(), "handed back uncounted: " + paid);
      assertEquals("none", InboxRows.leaseHolder(dir, "acme", "evt_paid"), "handed back: its lease let go");
      assertEquals(null, ran.get("evt_paid"), "the queued run did not begin after close() cut the runs short");
      InboxEntry slow = inbox.find("acme", "evt_slow").orElseThrow();
      assertEquals(InboxState.PENDING, slow.state(), slow.toString());
      assertEquals(0, slow.attempts(), "the cut run handed back uncounted: " + slow);
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_stop").orElseThrow().state());
    }
  }

  /** Until the handler's close() has returned, or is seen parked in its wait for the other runs. */
  private static void awaitReturnedOrWaiting(Thread closing, CountDownLatch returned) {
    while (returned.getCount() > 0
        && !parkedIn(closing, "awaitOthers")) {
      assertTrue(closing.isAlive(), "the closing handler's worker is alive");
      Thread.onSpinWait();
    }
  }
}
