package dev.idem.webhooks;

import static dev.idem.webhooks.ThreadFrames.parkedIn;
import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.webhooks.support.InboxRows;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A handler past its maximum run time (its lease abandoned) that closes its processor is owed a
 * lease from its call: keep() queues that renewal on the processor's scheduler. With no scheduler
 * given, the scheduler is the processor's own, and close() ends with {@code shutdownNow()} on it,
 * which drops a task still queued; the one scheduler thread may be busy (a beat's or a poll's write)
 * or not yet awake. The abandoned lease would then end where the limit left it, and another
 * processor run the event beside the handler's run, which goes on after its close(): processed
 * twice. Reviews rvkeep2 (a close() with nothing to wait for: failed before 5e439242, runs=2 in 13 of
 * 20 runs even without a hold) and rvkeep3 (a close() interrupted while it waits for another run:
 * failed before 9de0832e).
 *
 * <p>Lease 600 ms and maximum run time 100 ms on the processor's own scheduler (real time); the
 * leases on the virtual clock, which moves only when the test moves it. The scheduler thread is held
 * at a clock reading (HoldingClock), so the renewal waits behind it; the hold is let go once close()
 * returned or waits for the renewal; the clock passes the old lease end and a second processor
 * looks. Latches and thread states only, no sleep.
 */
class KillSwitchOwnSchedulerRenewalTest extends InboxOnVirtualClock {
  @Test
  void aHandlersCloseWithNothingToWaitForStillRenewsItsAbandonedLease() throws Exception {
    killSwitchWithBusyScheduler(false);
  }

  @Test
  void aHandlersCloseInterruptedWhileItWaitsForAnotherRunStillRenewsItsAbandonedLease() throws Exception {
    killSwitchWithBusyScheduler(true);
  }

  /** @param interrupted whether another run is going, and the kill switch is interrupted waiting for it */
  private void killSwitchWithBusyScheduler(boolean interrupted) throws Exception {
    Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    CountDownLatch limitPassed = new CountDownLatch(1);
    Semaphore goClose = new Semaphore(0);
    CountDownLatch closeReturned = new CountDownLatch(1);
    Semaphore finish = new Semaphore(0);
    CountDownLatch slowRunning = new CountDownLatch(1);
    Semaphore slowFinish = new Semaphore(0);
    HoldingClock clock = new HoldingClock(time.clock());
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p1 = WebhookProcessor.builder(inbox)
        .handler("app.stop", e -> {
          ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
          stopWorker.set(Thread.currentThread());
          try {
            new CountDownLatch(1).await(30, TimeUnit.SECONDS); // until its maximum run time interrupts it
          } catch (InterruptedException limit) {
            limitPassed.countDown();
          }
          goClose.acquireUninterruptibly();
          self.get().close(); // the kill switch
          Thread.interrupted();
          closeReturned.countDown();
          finish.acquireUninterruptibly(); // the rest of its step, after close()
        })
        .handler("order.paid", e -> {
          ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
          slowRunning.countDown();
          slowFinish.acquireUninterruptibly(); // the run the kill switch's close() waits for
        })
        .workers(2).maxRunTime(Duration.ofMillis(100)).lease(Duration.ofMillis(600))
        .pollInterval(Duration.ofHours(1)).clock(clock) // no scheduler: the processor's own
        .owner("p1").closeGrace(Duration.ofHours(1)).build();
    self.set(p1);
    WebhookHandler counting = e -> ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
    WebhookProcessor p2 = WebhookProcessor.builder(inbox).defaultHandler(counting).lease(Duration.ofMillis(600))
        .clock(time.clock()).scheduler(time.scheduler()).owner("p2").build();

    deliver(receiver, time, "evt_stop", "app.stop");
    long claimedAt = time.now().toEpochMilli();
    p1.start();
    assertTrue(limitPassed.await(30, TimeUnit.SECONDS), "the kill switch runs past its maximum run time");
    if (interrupted) {
      deliver(receiver, time, "evt_slow", "order.paid");
      assertTrue(slowRunning.await(30, TimeUnit.SECONDS), "the other handler runs");
    }
    // The next clock reading on p1's scheduler thread (a beat's renewal, or a poll) is held; only p1
    // reads this clock, and its own scheduler thread is named idem-webhooks-poller-*.
    clock.holdNextReadingOn(th -> th.getName().startsWith("idem-webhooks-poller"));
    assertTrue(clock.held.await(30, TimeUnit.SECONDS), "the scheduler thread reads the clock");
    time.advance(Duration.ofMillis(599));
    assertEquals("p1@" + (claimedAt + 600), InboxRows.leaseHolder(dir, "acme", "evt_stop"),
        "abandoned: its lease still ends a lease after the claim");

    goClose.release(); // the kill switch calls close(): keep() queues the renewal behind the held reading
    Thread closing = stopWorker.get();
    if (interrupted) {
      while (!parkedIn(closing, "awaitOthers")) {
        assertTrue(closeReturned.getCount() > 0, "close() waits for the other run");
        Thread.onSpinWait();
      }
      closing.interrupt(); // the app stops close()'s wait for the other runs
    }
    while (closeReturned.getCount() > 0 && !parkedIn(closing, "awaitKeptRenewals")) {
      Thread.onSpinWait(); // close() returned at once (the renewal dropped), or waits for it
    }
    clock.release.release(); // the scheduler thread goes on (it was busy a moment: a write, a poll)
    assertTrue(closeReturned.await(30, TimeUnit.SECONDS), "close() returns");
    long closedAt = time.now().toEpochMilli();
    String afterClose = InboxRows.leaseHolder(dir, "acme", "evt_stop");

    time.advance(Duration.ofMillis(2)); // past the old lease end; the kill switch still finishing its step
    int ranByOther = p2.processDue(10);

    finish.release();
    slowFinish.release();
    closing.join(30_000);
    assertFalse(closing.isAlive(), "the kill switch's worker left");
    p2.close();

    InboxEntry entry = inbox.find("acme", "evt_stop").orElseThrow();
    assertEquals(1, ran.get("evt_stop").get(), "the kill switch's event ran again beside its handler: its close()"
        + " (at " + closedAt + ") left the lease at " + afterClose + ", not renewed to a lease from the call ("
        + (closedAt + 600) + "); the other processor ran " + ranByOther + "; " + entry);
    assertEquals(0, ranByOther, "the other processor found nothing due");
    assertEquals(InboxState.DONE, entry.state(), entry.toString());
    assertEquals(1, entry.attempts(), entry.toString());
    assertEquals(1, entry.runs(), entry.toString());
  }
}
