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
 * Review (rv-whgap): a handler whose maximum run time passed (its lease abandoned) and which then
 * calls the processor's close() holds its event again while close() waits (see
 * {@link CloseAfterMaximumRunTimeTest}). That hold began only at the heartbeat's next beat, up to a
 * third of a lease after the call: when the abandoned lease ended before that beat, another
 * processor claimed the event in the gap and ran it beside the handler still waiting in close().
 *
 * <p>The gap is wide when the event's lease is out of step with the heartbeat: the heartbeat beats
 * every third of a lease from when the processor's first run began, and an event claimed between two
 * beats and abandoned before its first renewal has a lease that ends between two beats. Here: lease
 * 3 min (beats at 1, 2, 3, 4 min), maximum run time 20 s; the kill switch is claimed at 30 s (its
 * lease ends at 3 min 30 s), abandoned at 55 s, and calls close() at 3 min 20 s; the other
 * processor looks at 3 min 31 s, before the beat at 4 min.
 *
 * <p>Fake clock and scheduler; handlers held on semaphores, threads watched by state, no sleep.
 */
class RvWhgapKeptLeaseRenewedAtOnceTest extends InboxOnVirtualClock {
  @Test
  void aHandlerThatClosesTheProcessorAfterItsLimitHoldsItsLeaseFromTheCallOn() throws Exception {
    Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    CountDownLatch firstRunning = new CountDownLatch(1);
    Semaphore firstGo = new Semaphore(0);
    CountDownLatch stopRunning = new CountDownLatch(1);
    Semaphore goClose = new Semaphore(0);
    CountDownLatch closeReturned = new CountDownLatch(1);
    CountDownLatch slowRunning = new CountDownLatch(1);
    Semaphore finish = new Semaphore(0);
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p1 = WebhookProcessor.builder(inbox)
        .handler("order.created", e -> {
          ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
          firstRunning.countDown();
          firstGo.acquireUninterruptibly(); // sets the heartbeat's step, then returns despite its limit
        })
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
          slowRunning.countDown();
          finish.acquireUninterruptibly(); // a call that finishes within the grace
        })
        .workers(3).maxRunTime(Duration.ofSeconds(20)).lease(Duration.ofMinutes(3))
        .pollInterval(Duration.ofHours(1)).clock(time.clock()).scheduler(time.scheduler())
        .owner("p1").closeGrace(Duration.ofHours(1)).build();
    self.set(p1);
    // Another instance sharing the inbox, driven by this thread.
    WebhookHandler counting = e -> ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
    WebhookProcessor p2 = WebhookProcessor.builder(inbox).defaultHandler(counting).lease(Duration.ofMinutes(3))
        .clock(time.clock()).scheduler(time.scheduler()).owner("p2").build();

    // 0 s: a first run starts the heartbeat (beats at 1, 2, 3, 4 min).
    deliver(receiver, time, "evt_first", "order.created");
    p1.start();
    time.runDueTasks();
    assertTrue(firstRunning.await(30, TimeUnit.SECONDS), "the first handler runs");
    time.advance(Duration.ofSeconds(30));
    // 30 s: the kill switch is claimed between two beats, its lease until 3 min 30 s.
    deliver(receiver, time, "evt_stop", "app.stop");
    time.runDueTasks();
    assertTrue(stopRunning.await(30, TimeUnit.SECONDS), "the kill switch runs");
    firstGo.release(); // the first run ends (DONE); the heartbeat beats on, in its own step, for the kill switch
    while (inbox.find("acme", "evt_first").orElseThrow().state() != InboxState.DONE) {
      Thread.onSpinWait(); // its worker records DONE; it must not lapse and be run by the other processor below
    }
    time.advance(Duration.ofSeconds(160)); // 3 min 10 s: the kill switch's limit passed at 55 s, its lease abandoned
    deliver(receiver, time, "evt_slow", "order.paid"); // the run the kill switch's close() waits for
    time.runDueTasks();
    assertTrue(slowRunning.await(30, TimeUnit.SECONDS), "the other handler runs");
    time.advance(Duration.ofSeconds(10));
    Thread stop = stopWorker.get();

    // 3 min 20 s: the kill switch calls close(), 10 s before its abandoned lease ends.
    goClose.release();
    while (!parkedIn(stop, "awaitOthers")) {
      assertTrue(closeReturned.getCount() > 0, "close() waits for the other run");
      Thread.onSpinWait();
    }
    // 3 min 31 s: past the abandoned lease's end, before the heartbeat's next beat (4 min).
    time.advance(Duration.ofSeconds(11));
    String holder = InboxRows.leaseHolder(dir, "acme", "evt_stop");
    int ranByOther = p2.processDue(10);

    finish.release();
    assertTrue(closeReturned.await(30, TimeUnit.SECONDS), "close() returned");
    stop.join(30_000);
    assertFalse(stop.isAlive(), "the kill switch's worker left");
    p2.close();

    InboxEntry entry = inbox.find("acme", "evt_stop").orElseThrow();
    assertEquals(1, ran.get("evt_stop").get(), "the kill switch's event ran beside its handler, waiting in close():"
        + " lease at that moment " + holder + " (now " + time.now().toEpochMilli() + "), " + entry);
    assertEquals(0, ranByOther, "the other processor found nothing due");
    assertEquals(InboxState.DONE, entry.state(), entry.toString());
    assertEquals(1, entry.attempts(), entry.toString());
    assertEquals(1, entry.runs(), entry.toString());
    InboxEntry slow = inbox.find("acme", "evt_slow").orElseThrow();
    assertEquals(InboxState.DONE, slow.state(), slow.toString());
    assertEquals(1, ran.get("evt_slow").get());
    assertEquals(1, ran.get("evt_first").get());
  }
}
