package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (storage, interrupts during a disk sync): {@link DiskSync#ofWal} promises that "an
 * interrupt of the syncing thread does not fail the sync: the channel is opened again and the sync
 * made again". {@code WalSync.sync} retries once only: it clears the interrupt, reopens the channel
 * and calls {@code force} again outside any catch, so an interrupt that reaches the thread again
 * before or during that second {@code force} (a second interrupter: the webhook processor's close
 * cutting its handlers short after its watchdog interrupted one, an executor's shutdownNow after a
 * Future.cancel(true)) closes the new channel too, and the {@code ClosedByInterruptException}
 * escapes. {@code SingleConnectionStore.syncToDisk} takes that for a failed disk sync: the round's
 * callers are told their commit is unconfirmed and the store refuses every call until reopened,
 * although the disk is fine: the failure WalSync exists to prevent (WalSyncInterruptTest covers a
 * single interrupt only). The second interrupt is placed deterministically: the test holds the
 * WalSync's monitor, which the retry's {@code reopened} takes, and interrupts the syncing thread
 * while it waits there.
 */
class RvRstoreWalSyncSecondInterruptTest {
  @TempDir
  Path tmp;

  @Test
  void aSecondInterruptDuringTheRetryDoesNotFailTheSync() throws Exception {
    DiskSync sync = DiskSync.ofWal(tmp.resolve("t.db-wal"));
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread syncing = new Thread(() -> {
      Thread.currentThread().interrupt(); // the first interrupt: the first force closes the channel
      try {
        sync.sync();
      } catch (Throwable e) {
        failed.set(e);
      }
    }, "rvrstore-syncing");
    syncing.setDaemon(true);
    synchronized (sync) { // the monitor WalSync.reopened takes before the retry
      syncing.start();
      while (!waitsInReopened(syncing)) {
        if (!syncing.isAlive()) {
          break;
        }
        Thread.onSpinWait();
      }
      syncing.interrupt(); // the second interrupt, during the retry
    }
    syncing.join(10_000);
    if (failed.get() == null && syncing.isAlive()) {
      throw new AssertionError("the sync did not end");
    }
    try {
      assertNull(failed.get(), "an interrupted sync is made again, whatever the number of interrupts: "
          + failed.get());
    } finally {
      sync.close();
    }
  }

  /** Whether the thread waits for the WalSync monitor in the retry ({@code WalSync.reopened}). */
  private static boolean waitsInReopened(Thread t) {
    if (t.getState() != Thread.State.BLOCKED) {
      return false;
    }
    for (StackTraceElement f : t.getStackTrace()) {
      if (f.getMethodName().equals("reopened")) {
        return true;
      }
    }
    return false;
  }
}
