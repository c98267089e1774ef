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
 * Review (rvkeep2) of fca1bb32: {@code LeaseHeartbeat.keep} renews an abandoned lease by a one-shot
 * task on the processor's scheduler ({@code scheduler.schedule(() -> renew(List.of(e)), ZERO)}), "never
 * cancelled by the close that follows". But when the app gave no scheduler, the scheduler is the
 * one the poll loop owns, and the handler's own close() ends in {@code shutDown} with
 * {@code loop.close()}, which calls {@code ownedScheduler.shutdownNow()}: a task still queued is
 * dropped without running (and no RejectedExecutionException is thrown, so nothing is logged either).
 * The one scheduler thread is shared by the polls, the heartbeat's beats and the watchdog: if it is
 * busy when keep() queues the renewal (here: a heartbeat beat reading the clock, as one would be
 * while its write waits for a slow database), or simply not yet woken, the handler's thread (a few
 * lock operations, no other run to wait for) reaches {@code shutdownNow()} first. The abandoned lease
 * is then never renewed: it ends where the maximum run time left it. This is the default setup
 * (no {@code Builder.scheduler}), and the very gap 240b9cbc, 503bddeb and fca1bb32 set out to close;
 * the existing tests use the virtual scheduler, which is never shut down, and so miss it.
 *
 * <p>Why it matters: the handler's run goes on after its close() returns; another processor claims
 * the event once that lease ends and runs it beside this run: processed twice.
 *
 * <p>Here: lease 600 ms, maximum run time 100 ms (the processor's own scheduler times beats in real
 * time; the leases are on the virtual clock, frozen unless the test moves it). The kill switch is
 * claimed at T0 (lease until T0 + 600 ms), interrupted by its limit (abandoned); the next beat is held
 * at its clock reading on the scheduler thread (HoldingClock), so the renewal keep() queues waits
 * behind it; the clock moves to T0 + 599 ms, the handler calls close(); the beat is let go once
 * close() returned or waits for the renewal (it waits, bounded, before it shuts the scheduler
 * down); the clock moves past T0 + 600 ms and a second processor looks. No sleep: latches only.
 */
class RvRvkeep2OwnSchedulerDropsKeptRenewalTest extends InboxOnVirtualClock {
  @Test
  void aHandlersCloseOnTheProcessorsOwnSchedulerStillRenewsItsAbandonedLease() throws Exception {
    Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    CountDownLatch limitPassed = new CountDownLatch(1);
    Semaphore goClose = new Semaphore(0);
    CountDownLatch closeReturned = new CountDownLatch(1);
    Semaphore finish = new Semaphore(0);
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
          self.get().close(); // the kill switch; nothing else runs, so it does not wait
          Thread.interrupted();
          closeReturned.countDown();
          finish.acquireUninterruptibly(); // the rest of its step, after close()
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
    // The watchdog's task (interrupt, then abandon) reads no clock: the next reading on the
    // scheduler thread is a later task's, a heartbeat beat's renewal (nothing renewing: abandoned).
    // Only p1 reads this clock; its own scheduler thread is named idem-webhooks-poller-*.
    clock.holdNextReadingOn(th -> th.getName().startsWith("idem-webhooks-poller"));
    assertTrue(clock.held.await(30, TimeUnit.SECONDS), "a beat reads the clock on the scheduler thread");
    time.advance(Duration.ofMillis(599));
    assertEquals("p1@" + (claimedAt + 600), InboxRows.leaseHolder(dir, "acme", "evt_stop"),
        "abandoned: its lease still ends a lease after the claim");

    goClose.release(); // the handler calls close(): keep() queues the renewal behind the beat
    Thread closing = stopWorker.get();
    while (closeReturned.getCount() > 0 && !parkedIn(closing, "awaitKeptRenewals")) {
      Thread.onSpinWait(); // close() returned at once (the renewal dropped), or waits for it
    }
    clock.release.release(); // the beat goes on (the scheduler was busy a moment: a write, a poll)
    assertTrue(closeReturned.await(30, TimeUnit.SECONDS), "close() returns");
    long closedAt = time.now().toEpochMilli();
    String afterClose = InboxRows.leaseHolder(dir, "acme", "evt_stop");

    time.advance(Duration.ofMillis(2)); // past the old lease end; the handler still finishing its step
    int ranByOther = p2.processDue(10);

    finish.release();
    Thread stop = stopWorker.get();
    stop.join(30_000);
    assertFalse(stop.isAlive(), "the kill switch's worker left");
    p2.close();

    InboxEntry entry = inbox.find("acme", "evt_stop").orElseThrow();
    assertEquals(1, ran.get("evt_stop").get(), "the kill switch's event ran again beside its handler: its close()"
        + " (at " + closedAt + ") left the lease at " + afterClose + ", not renewed to a lease from the call ("
        + (closedAt + 600) + "): the renewal keep() queued on the processor's own scheduler was dropped by"
        + " shutdownNow() (a beat held on the scheduler thread meanwhile); the other processor ran " + ranByOther + "; " + entry);
    assertEquals(0, ranByOther, "the other processor found nothing due");
    assertEquals(InboxState.DONE, entry.state(), entry.toString());
    assertEquals(1, entry.attempts(), entry.toString());
    assertEquals(1, entry.runs(), entry.toString());
  }
}
