package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (b1790773 with 03361cc7): nothing bounds an event whose handler hangs. The heartbeat
 * renews its lease for as long as the process lives (no maximum run time, the 24 h deadline never
 * consulted), and when close() interrupts it at the next deploy the run is released uncounted,
 * with its first attempt forgotten, so the deadline starts over. After the restart it is claimed
 * first (due at once) and hangs again. A payload that makes the handler wait forever (a lock, a
 * condition that never comes true, a call with no timeout to a host that black-holes) thus holds a
 * worker in every process life, forever: never an attempt, never a dead letter, nothing an
 * operator's dead-letter alerting sees. Before these commits the lease lapsed and the attempts ran
 * out; a run that ended with an exception after the same 25 h is a dead letter (the deadline).
 *
 * <p>A 30-minute lease and an hourly poll only to keep the fake scheduler's tasks few. Fake clock and scheduler (polls and renewals on the test thread); the worker is a real thread,
 * waited for on a semaphore and joined, never a sleep.
 */
class ReviewHungRunUnboundedTest {
  @TempDir
  Path dir;

  @Test
  void aHandlerHangingForeverIsNeverCountedNorDeadLetteredAcrossRestarts() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    Semaphore entered = new Semaphore(0);
    CountDownLatch never = new CountDownLatch(1);
    AtomicReference<Thread> worker = new AtomicReference<>();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      deliver(receiver, time, "evt_hang");

      for (int life = 1; life <= 2; life++) {
        WebhookProcessor p = WebhookProcessor.builder(inbox)
            .handler("order.paid", e -> {
              worker.set(Thread.currentThread());
              entered.release();
              never.await(); // hangs; answers close()'s interrupt
            })
            .lease(Duration.ofMinutes(30)).pollInterval(Duration.ofHours(1))
            .closeGrace(Duration.ZERO).clock(time.clock()).scheduler(time.scheduler()).owner("p" + life).build();
        p.start();
        time.runDueTasks();
        assertTrue(entered.tryAcquire(30, TimeUnit.SECONDS), "life " + life + ": the handler started");
        time.advance(Duration.ofHours(25)); // renewed all along: still PROCESSING here
        p.close(); // the deploy: interrupts the handler
        worker.get().join(TimeUnit.SECONDS.toMillis(30));
      }

      InboxEntry entry = inbox.find("acme", "evt_hang").orElseThrow();
      List<HandlerAttempt> runs = inbox.attempts("acme", "evt_hang");
      assertTrue(entry.attempts() >= 2 || entry.state() == InboxState.DEAD, "two runs of 25 h each (50 h, past the"
          + " default policy's 24 h deadline) must count as attempts, or end the event as a dead letter; actual:"
          + " state " + entry.state() + ", attempts " + entry.attempts() + " after " + runs.size() + " runs "
          + runs.stream().map(a -> a.outcome().orElse("-")).toList() + ": due again at once, the deadline started"
          + " over, and it will hang the next process's worker too, forever");
    }
  }
}
