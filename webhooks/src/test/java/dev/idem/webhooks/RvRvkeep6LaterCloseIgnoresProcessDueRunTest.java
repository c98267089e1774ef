package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Review (rvkeep6) of d6ed53f0: a later close() does not wait for a run that a processDue call
 * still has going, although the Javadoc of close() and docs/webhooks.md promise that "if the first
 * did not see every run end (it came from a handler, whose own run it cannot wait for; its caller
 * was interrupted; runs were left behind)", a later close() from outside "waits ... for the runs
 * still going as well, so that whoever closes the inbox next does not close it under a run still
 * recording its outcome".
 *
 * <p>Where: {@code WebhookProcessor.awaitWorkers}, branch {@code w == null} (never started, the
 * app drives processDue), calls {@code markPoolEnded()} unconditionally: when close() came from a
 * processDue handler (the kill switch; awaitPoll leaves out the caller's own call) and when the
 * grace ran out with a processDue run still going. {@code awaitClosed} then sees
 * {@code poolEnded} and returns at once; it never looks at {@code polls}/{@code dueCallers}
 * anyway (only at the workers' pool: null when never started; beside start(), an idle pool that
 * has terminated, so the same happens there). The app's shutdown (close(), then inbox.close())
 * closes the inbox under the handler, whose outcome is then lost or fails to be written, and the
 * event runs again.
 */
class RvRvkeep6LaterCloseIgnoresProcessDueRunTest extends InboxOnVirtualClock {
  /** Set when the run's outcome (DONE) has been recorded: the listener hears it after the write. */
  private final AtomicBoolean outcomeRecorded = new AtomicBoolean();

  private void recordOutcome(WebhookActivity a) {
    if (a instanceof WebhookActivity.Processed) {
      outcomeRecorded.set(true);
    }
  }

  /** The kill switch: a handler run by processDue closes the processor, then finishes its work. */
  @Test
  void laterCloseWaitsForTheProcessDueHandlerThatClosedTheProcessor() throws Exception {
    CountDownLatch closedByHandler = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor[] p = new WebhookProcessor[1];
    p[0] = WebhookProcessor.builder(inbox)
        .handler("report.build", e -> {
          p[0].close(); // kill switch
          closedByHandler.countDown();
          finish.await(); // finishes its current work, then returns
        })
        .listener(a -> recordOutcome(a)).closeGrace(Duration.ofHours(1)).clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_1", "report.build");
    time.advance(Duration.ofMillis(1));

    CompletableFuture<Integer> driving = CompletableFuture.supplyAsync(() -> p[0].processDue(1));
    try {
      assertTrue(closedByHandler.await(30, TimeUnit.SECONDS), "the handler's close() returned");
      assertLaterCloseWaitsFor(p[0], finish);
    } finally {
      finish.countDown();
      driving.get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * The same beside start()ed processing ("it may run beside start()ed processing"): the kill switch
   * in a processDue handler sees the (idle) pool end, and a later close() waits only for the pool.
   */
  @Test
  void laterCloseWaitsForTheProcessDueHandlerThatClosedAStartedProcessor() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    CountDownLatch closedByHandler = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor[] p = new WebhookProcessor[1];
    p[0] = WebhookProcessor.builder(inbox)
        .handler("report.build", e -> {
          entered.countDown();
          go.await();
          p[0].close(); // kill switch
          closedByHandler.countDown();
          finish.await();
        })
        .listener(a -> recordOutcome(a)).closeGrace(Duration.ofHours(1)).clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_1", "report.build");
    time.advance(Duration.ofMillis(1));

    CompletableFuture<Integer> driving = CompletableFuture.supplyAsync(() -> p[0].processDue(1));
    try {
      assertTrue(entered.await(30, TimeUnit.SECONDS), "the handler started");
      p[0].start(); // background processing beside it (the event is leased: it claims nothing)
      go.countDown();
      assertTrue(closedByHandler.await(30, TimeUnit.SECONDS), "the handler's close() returned");
      assertLaterCloseWaitsFor(p[0], finish);
    } finally {
      go.countDown();
      finish.countDown();
      driving.get(30, TimeUnit.SECONDS);
    }
  }

  /** The first close() from outside ran out of grace with a processDue run still going. */
  @Test
  void laterCloseWaitsForAProcessDueRunTheFirstCloseLeftBehind() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    WebhookInbox inbox = openInbox();
    WebhookReceiver receiver = receiver(inbox, time);
    WebhookProcessor p = WebhookProcessor.builder(inbox)
        .handler("report.build", e -> {
          entered.countDown();
          // Ignores the interrupt close() makes after its grace: left behind (close() interrupts a
          // processDue run past its grace, and one that answers it has ended before close() returns).
          boolean interrupted = false;
          while (true) {
            try {
              finish.await();
              break;
            } catch (InterruptedException ex) {
              interrupted = true;
            }
          }
          if (interrupted) {
            Thread.currentThread().interrupt();
          }
        })
        // a short grace: the first close() must run out of it, and of the 5 s after the interrupt
        // (bounds, not waits for a race)
        .listener(a -> recordOutcome(a)).closeGrace(Duration.ofMillis(50)).clock(time.clock()).scheduler(time.scheduler()).owner("p1").build();
    deliver(receiver, time, "evt_1", "report.build");
    time.advance(Duration.ofMillis(1));

    CompletableFuture<Integer> driving = CompletableFuture.supplyAsync(() -> p.processDue(1));
    try {
      assertTrue(entered.await(30, TimeUnit.SECONDS), "the handler started");
      p.close(); // first close(): the grace runs out, the run is left behind (logged)
      assertTrue(!driving.isDone(), "the processDue run is still going after the first close()");
      assertLaterCloseWaitsFor(p, finish);
    } finally {
      finish.countDown();
      driving.get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * Calls close() on another thread; releases the handler only once that close() waits (so a
   * close() that waits for the run sees it end); fails if it returned before the run's outcome
   * was recorded.
   */
  private void assertLaterCloseWaitsFor(WebhookProcessor p, CountDownLatch finish) throws InterruptedException {
    AtomicBoolean runEndedAtReturn = new AtomicBoolean();
    Thread later = new Thread(() -> {
      p.close();
      runEndedAtReturn.set(outcomeRecorded.get());
    }, "later-close");
    later.start();
    ThreadFrames.awaitEndedOrWaiting(later);
    boolean returnedAtOnce = later.getState() == Thread.State.TERMINATED;
    finish.countDown(); // the handler may finish now
    later.join(TimeUnit.SECONDS.toMillis(30));
    assertTrue(runEndedAtReturn.get(), "a later close() from outside must wait (within grace + 5 s) for the run a"
        + " processDue call still has going, so that the inbox closed next is not closed under it; it "
        + (returnedAtOnce ? "returned at once" : "returned") + " with the run's outcome not yet recorded");
  }
}
