package dev.idem.webhooks;

import static dev.idem.webhooks.ThreadFrames.parkedIn;
import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
 * Review (rvkeep3) of 5e439242/a8323589: on the processor's own scheduler, close() waits for the
 * renewal keep() queued ({@code heartbeat.awaitKeptRenewals}) before {@code loop.close()} drops what
 * is still queued with {@code shutdownNow()}. But the wait returns at once when the closing thread is
 * interrupted ("returns early if interrupted"), and close() then shuts the scheduler down all the
 * same: a kill switch whose close() is interrupted while it waits for the other runs (close()'s
 * documented "a caller interrupted while waiting stops waiting") loses the renewal it is "owed, a
 * lease from its call" (keep()'s Javadoc) if the scheduler thread had not run it yet (busy with a
 * beat's or a poll's write). The abandoned lease then ends where the maximum run time left it, and
 * the handler, whose run goes on after close() returns, has its event run beside it by another
 * processor: processed twice. The wait is for a quick write already due; an interrupt means "stop
 * waiting for the runs", not "drop the lease the caller is owed".
 *
 * <p>Here (as {@link RvRvkeep2OwnSchedulerDropsKeptRenewalTest}): lease 600 ms, maximum run time
 * 100 ms, no scheduler given; the scheduler thread is held at a clock reading (a slow write), the
 * kill switch calls close(), which waits for another run; the kill switch's thread is interrupted
 * there; the hold is let go once close() returned or waits for the renewal; the clock passes the
 * old lease end and a second processor looks. Latches and thread states only, no sleep.
 */
class RvRvkeep3InterruptedCloseDropsKeptRenewalTest extends InboxOnVirtualClock {
  @Test
  void anInterruptedKillSwitchCloseStillRenewsItsAbandonedLease() throws Exception {
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
          self.get().close(); // the kill switch; waits for the other run, until interrupted
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
    deliver(receiver, time, "evt_slow", "order.paid");
    assertTrue(slowRunning.await(30, TimeUnit.SECONDS), "the other handler runs");
    // The next clock reading on p1's scheduler thread (a beat's renewal, or a poll) is held.
    clock.holdNextReadingOn(th -> th.getName().startsWith("idem-webhooks-poller"));
    assertTrue(clock.held.await(30, TimeUnit.SECONDS), "the scheduler thread reads the clock");
    time.advance(Duration.ofMillis(599));
    assertEquals("p1@" + (claimedAt + 600), InboxRows.leaseHolder(dir, "acme", "evt_stop"),
        "abandoned: its lease still ends a lease after the claim");

    goClose.release(); // the kill switch calls close(): keep() queues the renewal behind the held reading
    Thread closing = stopWorker.get();
    while (!parkedIn(closing, "awaitOthers")) {
      assertTrue(closeReturned.getCount() > 0, "close() waits for the other run");
      Thread.onSpinWait();
    }
    closing.interrupt(); // the app stops close()'s wait for the other runs
    while (closeReturned.getCount() > 0 && !parkedIn(closing, "awaitKeptRenewals")) {
      Thread.onSpinWait(); // close() returned at once (the renewal dropped), or waits for it
    }
    clock.release.release(); // the scheduler thread goes on (it was busy a moment: a write, a poll)
    assertTrue(closeReturned.await(30, TimeUnit.SECONDS), "close() returns once interrupted");
    long closedAt = time.now().toEpochMilli();
    String afterClose = InboxRows.leaseHolder(dir, "acme", "evt_stop");

    time.advance(Duration.ofMillis(2)); // past the old lease end; the kill switch still finishing its step
    p2.processDue(10);
    int ranStop = ran.get("evt_stop").get();

    finish.release();
    slowFinish.release();
    closing.join(30_000);
    p2.close();

    assertEquals(1, ranStop, "the kill switch's event ran again beside its handler: its interrupted close() (at "
        + closedAt + ") left the lease at " + afterClose + ", not renewed to a lease from the call ("
        + (closedAt + 600) + "): awaitKeptRenewals returned at once on the interrupt and loop.close()'s"
        + " shutdownNow() dropped the renewal keep() had queued");
  }
}
