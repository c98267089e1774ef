package dev.idem.webhooks;

import static dev.idem.webhooks.ThreadFrames.parkedIn;
import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.poll.PollLoop;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Review (rv-whgap): handing a claimed event to the workers may throw something other than the
 * pool's {@code RejectedExecutionException} (closing): the JVM's {@code OutOfMemoryError: unable to
 * create native thread} when the pool starts a worker, or whatever else its thread factory throws.
 * The poll then left the worker slot taken, the run counted as queued and the event listed as
 * running (its lease renewed, never claimed again here): the event stuck, one worker fewer for
 * good, and a handler's close() waiting out its whole grace for a run that would never come.
 *
 * <p>Expected: the event goes back to PENDING, due now, its attempt not counted (no handler ran),
 * the slot and the queued run are given back, and the failure surfaces as a poll's does: an Error
 * stops background processing ({@code lastPollFailure()}, {@code processDue} names it), another
 * failure is a failed poll, retried after the backoff.
 *
 * <p>The workers' threads come from a factory that throws once, in place of the thread it was asked
 * for ({@link WebhookProcessor.Builder#workerThreads}). Fake clock and scheduler; no sleep.
 */
class RvWhgapWorkerHandOffFailureTest extends InboxOnVirtualClock {
  /** Makes the workers' threads, but throws instead of the {@code n}th (from 1). */
  private static final class FailingThreads implements ThreadFactory {
    private final ThreadFactory threads = PollLoop.daemonThreads("idem-webhooks-worker");
    private final AtomicInteger made = new AtomicInteger();
    private final int failing;
    private final Supplier<? extends Throwable> failure;

    FailingThreads(int failing, Supplier<? extends Throwable> failure) {
      this.failing = failing;
      this.failure = failure;
    }

    @Override
    public Thread newThread(Runnable task) {
      if (made.incrementAndGet() == failing) {
        Throwable t = failure.get();
        if (t instanceof Error e) {
          throw e;
        }
        throw (RuntimeException) t;
      }
      return threads.newThread(task);
    }
  }

  @Test
  void anErrorStartingAWorkerHandsTheEventBackAndAHandlersCloseDoesNotWaitForIt() throws Exception {
    OutOfMemoryError oom = new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource"
        + " limits reached");
    Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    CountDownLatch stopRunning = new CountDownLatch(1);
    Semaphore goClose = new Semaphore(0);
    CountDownLatch closeReturned = new CountDownLatch(1);
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p1 = WebhookProcessor.builder(inbox)
        .handler("app.stop", e -> {
          ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
          stopWorker.set(Thread.currentThread());
          stopRunning.countDown();
          goClose.acquireUninterruptibly();
          self.get().close(); // the kill switch: waits for the other runs, if any
          closeReturned.countDown();
        })
        .handler("order.paid", e -> ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet())
        .workers(2).pollInterval(Duration.ofHours(1)).clock(time.clock()).scheduler(time.scheduler())
        .owner("p1").closeGrace(Duration.ofHours(1)).workerThreads(new FailingThreads(2, () -> oom)).build();
    self.set(p1);
    deliver(receiver, time, "evt_stop", "app.stop");
    p1.start();
    time.runDueTasks();
    assertTrue(stopRunning.await(30, TimeUnit.SECONDS), "the kill switch runs");
    Thread stop = stopWorker.get();

    deliver(receiver, time, "evt_2", "order.paid");
    time.runDueTasks(); // claims evt_2; the pool cannot start the worker for it

    assertSame(oom, p1.lastPollFailure().orElse(null), "the Error stopped background processing, and is reported");
    WebhookInboxException refused = assertThrows(WebhookInboxException.class, () -> p1.processDue(1));
    assertSame(oom, refused.getCause(), "processDue names the Error");

    // The kill switch closes the processor: no run of the other event is to come, so nothing to wait for.
    goClose.release();
    while (closeReturned.getCount() > 0 && !parkedIn(stop, "awaitOthers")) {
      Thread.onSpinWait();
    }
    assertEquals(0, closeReturned.getCount(), "the handler's close() waits (grace 1 h) for a run that never comes");
    stop.join(30_000);
    assertFalse(stop.isAlive(), "the kill switch's worker left");
    InboxEntry handedBack = inbox.find("acme", "evt_2").orElseThrow();
    assertEquals(InboxState.PENDING, handedBack.state(), "the event no worker took went back: " + handedBack);
    assertEquals(0, handedBack.attempts(), "its attempt not counted, no handler ran: " + handedBack);

    // The next processor runs the event, once.
    WebhookHandler counting = e -> ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
    WebhookProcessor p2 = WebhookProcessor.builder(inbox).defaultHandler(counting).clock(time.clock())
        .scheduler(time.scheduler()).owner("p2").build();
    assertEquals(1, p2.processDue(10), "the next processor finds the event due");
    p2.close();
    InboxEntry entry = inbox.find("acme", "evt_2").orElseThrow();
    assertEquals(1, ran.get("evt_2").get());
    assertEquals(InboxState.DONE, entry.state(), entry.toString());
    assertEquals(1, entry.attempts(), entry.toString());
    assertEquals(InboxState.DONE, inbox.find("acme", "evt_stop").orElseThrow().state());
    assertEquals(1, ran.get("evt_stop").get());
  }

  @Test
  void anotherFailureStartingAWorkerIsAFailedPollAndLeaksNoWorker() throws Exception {
    IllegalStateException refusal = new IllegalStateException("thread creation refused by the container");
    Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
    Map<String, CountDownLatch> running = new ConcurrentHashMap<>();
    Semaphore finish = new Semaphore(0);
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("order.paid", e -> {
          ran.computeIfAbsent(e.eventId(), k -> new AtomicInteger()).incrementAndGet();
          running.get(e.eventId()).countDown();
          finish.acquireUninterruptibly();
        })
        .workers(2).clock(time.clock()).scheduler(time.scheduler()) // a poll every second, 2 s after a failed one
        .owner("p1").workerThreads(new FailingThreads(1, () -> refusal)).build();
    running.put("evt_1", new CountDownLatch(1));
    running.put("evt_2", new CountDownLatch(1));
    deliver(receiver, time, "evt_1", "order.paid");
    deliver(receiver, time, "evt_2", "order.paid");
    p.start();
    time.runDueTasks(); // claims both; the pool cannot start the worker for the first

    for (String id : new String[] {"evt_1", "evt_2"}) {
      InboxEntry handedBack = inbox.find("acme", id).orElseThrow();
      assertEquals(InboxState.PENDING, handedBack.state(), "the poll's claims went back: " + handedBack);
      assertEquals(0, handedBack.attempts(), "their attempts not counted, no handler ran: " + handedBack);
    }
    assertSame(refusal, p.lastPollFailure().orElse(null), "a failed poll, reported");

    // After the poll's backoff: both are claimed again and run at once, on the 2 workers.
    time.advance(Duration.ofSeconds(2));
    assertTrue(running.get("evt_1").await(30, TimeUnit.SECONDS), "evt_1 runs");
    assertTrue(running.get("evt_2").await(30, TimeUnit.SECONDS), "evt_2 runs beside it");
    assertTrue(p.lastPollFailure().isEmpty(), "the polls work again: " + p.lastPollFailure());

    finish.release(2);
    p.close();
    for (String id : new String[] {"evt_1", "evt_2"}) {
      InboxEntry entry = inbox.find("acme", id).orElseThrow();
      assertEquals(1, ran.get(id).get(), id);
      assertEquals(InboxState.DONE, entry.state(), entry.toString());
      assertEquals(1, entry.attempts(), entry.toString());
    }
  }
}
