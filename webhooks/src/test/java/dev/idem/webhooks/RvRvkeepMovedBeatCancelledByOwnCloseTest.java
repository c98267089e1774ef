package dev.idem.webhooks;

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
 * Review (rvkeep) of 503bddeb: {@code LeaseHeartbeat.keep} no longer renews a kept lease in the
 * call, it only moves the heartbeat's next beat to "now" on the scheduler ({@code
 * BeatChain.nowLocked}). When the handler's close() has no other run to wait for, it goes straight
 * on to {@code shutDown}'s {@code heartbeat.close()}, whose {@code stopLocked()} cancels that moved
 * beat if the scheduler has not run it yet: a race between the handler's thread (a few lock
 * operations) and the scheduler thread (to be woken), which the handler's thread easily wins. The
 * lease promised "renewed again, at once" (close() Javadoc, docs/webhooks.md, keep() Javadoc) is
 * then never renewed: it still ends where the maximum run time left it (abandoned), however close
 * that is. 240b9cbc wrote the renewal in the call, so the handler had a full lease from its close().
 *
 * <p>Why it matters: the handler's run goes on after its close() returns (it records its outcome,
 * or finishes its step); if the abandoned lease ends meanwhile, another processor claims the event
 * and runs it beside this run: processed twice, and this run's outcome discarded as stale, the very
 * thing keep() is there to stop.
 *
 * <p>Here: lease 3 min, maximum run time 20 s; the kill switch is claimed at 0 s (lease until
 * 3 min), abandoned at 25 s, calls close() at 2 min 59 s with nothing else running; close()
 * returns; its handler takes 2 more seconds; the other processor looks at 3 min 1 s. The virtual
 * scheduler runs the moved beat only when the test moves the clock, which is the interleaving where
 * the handler's close() reaches heartbeat.close() first. Fake clock and scheduler, no sleep.
 */
class RvRvkeepMovedBeatCancelledByOwnCloseTest extends InboxOnVirtualClock {
  @Test
  void aHandlersCloseWithNothingToWaitForStillRenewsItsAbandonedLease() throws Exception {
    Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    CountDownLatch stopRunning = new CountDownLatch(1);
    Semaphore goClose = new Semaphore(0);
    CountDownLatch closeReturned = new CountDownLatch(1);
    Semaphore finish = new Semaphore(0);
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p1 = WebhookProcessor.builder(inbox)
        .handler("app.stop", e -> {
          ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
          stopWorker.set(Thread.currentThread());
          stopRunning.countDown();
          goClose.acquireUninterruptibly(); // past its limit: interrupted, its lease abandoned
          self.get().close(); // the kill switch; nothing else runs, so it does not wait
          Thread.interrupted(); // the limit's interrupt, given back: this handler does not care
          closeReturned.countDown();
          finish.acquireUninterruptibly(); // the rest of its step, after close()
        })
        .workers(2).maxRunTime(Duration.ofSeconds(20)).lease(Duration.ofMinutes(3))
        .pollInterval(Duration.ofHours(1)).clock(time.clock()).scheduler(time.scheduler())
        .owner("p1").closeGrace(Duration.ofHours(1)).build();
    self.set(p1);
    // Another instance sharing the inbox, driven by this thread.
    WebhookHandler counting = e -> ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
    WebhookProcessor p2 = WebhookProcessor.builder(inbox).defaultHandler(counting).lease(Duration.ofMinutes(3))
        .clock(time.clock()).scheduler(time.scheduler()).owner("p2").build();

    // 0 s: the kill switch is claimed, its lease until 3 min.
    deliver(receiver, time, "evt_stop", "app.stop");
    p1.start();
    time.runDueTasks();
    assertTrue(stopRunning.await(30, TimeUnit.SECONDS), "the kill switch runs");
    long claimedAt = time.now().toEpochMilli();
    // 2 min 59 s: its limit passed at 25 s, its lease abandoned (no renewal at the 1 and 2 min beats).
    time.advance(Duration.ofSeconds(179));
    String before = InboxRows.leaseHolder(dir, "acme", "evt_stop");
    assertEquals("p1@" + (claimedAt + 180_000), before, "abandoned: its lease still ends 3 min after the claim");

    goClose.release(); // the handler calls close()
    assertTrue(closeReturned.await(30, TimeUnit.SECONDS), "close() returns: no other run to wait for");
    long closedAt = time.now().toEpochMilli();
    String afterClose = InboxRows.leaseHolder(dir, "acme", "evt_stop");

    // 3 min 1 s: the handler is still finishing its step; another processor looks.
    time.advance(Duration.ofSeconds(2));
    int ranByOther = p2.processDue(10);

    finish.release();
    Thread stop = stopWorker.get();
    stop.join(30_000);
    assertFalse(stop.isAlive(), "the kill switch's worker left");
    p2.close();

    InboxEntry entry = inbox.find("acme", "evt_stop").orElseThrow();
    assertEquals(1, ran.get("evt_stop").get(), "the kill switch's event ran again beside its handler: its close()"
        + " (at " + closedAt + ") left the lease at " + afterClose + ", not renewed to a lease from the call ("
        + (closedAt + 180_000) + "); the other processor ran " + ranByOther + "; " + entry);
    assertEquals(0, ranByOther, "the other processor found nothing due");
    assertEquals(InboxState.DONE, entry.state(), entry.toString());
    assertEquals(1, entry.attempts(), entry.toString());
    assertEquals(1, entry.runs(), entry.toString());
  }
}
