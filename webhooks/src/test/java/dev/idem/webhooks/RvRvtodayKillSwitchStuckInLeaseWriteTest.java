package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Review (rvtoday) of 240b9cbc: a handler's close() now writes to the inbox, on the handler's
 * thread, before it does anything else. {@code WorkerRuns.stopTimingCaller()} runs
 * {@code LeaseHeartbeat.keep(e)}, which renews the caller's lease at once ({@code store.renew}); it
 * is the first thing {@code WebhookProcessor.close()} does, before {@code closed = true}, and it
 * runs for every handler that calls close(), not only for one whose maximum run time had passed
 * (a lease still renewing is renewed all the same).
 *
 * <p>Why it matters: close() is the handler's kill switch, documented as "Stops claiming" from the
 * call on, and as returning within the grace plus 5 s. While that renewal write waits (its row
 * locked by another transaction, a database that does not answer: nothing bounds it), the
 * processor is not closed at all: its polls go on claiming and running events after the handler
 * pulled the switch, and close() does not return whatever its grace. Before 240b9cbc close() never
 * wrote to the inbox on its caller's thread, and closed at once.
 *
 * <p>Real PostgreSQL (the row lock is what holds the write); virtual clock and scheduler, so the
 * poll runs on the test thread when the test asks; no sleep: the test waits for the renewal to be
 * seen waiting on the lock (or for close() to return, as it did before).
 */
@ExtendWith(PostgresExtension.class)
class RvRvtodayKillSwitchStuckInLeaseWriteTest {
  private final VirtualTime time = new VirtualTime(ReceiverTest.T0);

  @Test
  void aHandlersCloseStopsClaimingEvenWhileItsLeaseRowIsLocked(PgDatabase db) throws Exception {
    AtomicReference<WebhookProcessor> self = new AtomicReference<>();
    AtomicReference<Thread> stopWorker = new AtomicReference<>();
    CountDownLatch stopRunning = new CountDownLatch(1);
    Semaphore goClose = new Semaphore(0);
    CountDownLatch closeReturned = new CountDownLatch(1);
    AtomicInteger paidRuns = new AtomicInteger();
    WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).clock(time.clock()).open();
    WebhookProcessor p = null;
    Connection locker = db.dataSource().getConnection();
    try (Connection watcher = db.dataSource().getConnection()) {
      WebhookReceiver receiver = receiver(inbox, time);
      p = WebhookProcessor.builder(inbox)
          .handler("app.stop", e -> {
            stopWorker.set(Thread.currentThread());
            stopRunning.countDown();
            goClose.acquireUninterruptibly();
            self.get().close(); // the kill switch
            closeReturned.countDown();
          })
          .handler("order.paid", e -> paidRuns.incrementAndGet())
          .workers(2).pollInterval(Duration.ofHours(1)).clock(time.clock()).scheduler(time.scheduler())
          .owner("p1").build();
      self.set(p);
      deliver(receiver, time, "evt_stop", "app.stop");
      p.start();
      time.runDueTasks();
      assertTrue(stopRunning.await(30, TimeUnit.SECONDS), "the kill switch's handler runs");

      // Another transaction holds the row of the running event (an operator's query, a slow
      // replica failover: anything that keeps that one UPDATE waiting).
      locker.setAutoCommit(false);
      try (Statement s = locker.createStatement()) {
        s.executeQuery("SELECT 1 FROM idem_webhook_inbox WHERE source = 'acme' AND event_id = 'evt_stop' FOR UPDATE")
            .close();
      }

      goClose.release(); // the handler calls close()
      while (closeReturned.getCount() > 0 && !renewalWaitsOnALock(watcher)) {
        Thread.onSpinWait();
      }

      // An event arrives after the switch was pulled; the next poll must not claim it.
      deliver(receiver, time, "evt_2", "order.paid");
      time.runDueTasks();
      InboxEntry second = inbox.find("acme", "evt_2").orElseThrow();
      assertEquals(InboxState.PENDING, second.state(), "close() was called by the handler (closeReturned="
          + (closeReturned.getCount() == 0) + "), yet the processor claimed an event after it: " + second);
    } finally {
      locker.rollback();
      locker.close();
      if (p != null) {
        assertTrue(closeReturned.await(30, TimeUnit.SECONDS), "the handler's close() returns once the lock is gone");
        Thread t = stopWorker.get();
        if (t != null) {
          t.join(30_000);
        }
        p.close();
      }
      inbox.close();
    }
  }

  /** Whether a backend of this database waits for a row lock (the renewal's UPDATE). */
  private static boolean renewalWaitsOnALock(Connection watcher) throws Exception {
    try (PreparedStatement ps = watcher.prepareStatement("SELECT count(*) FROM pg_stat_activity"
        + " WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%lease_until%'");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1) > 0;
    }
  }
}
