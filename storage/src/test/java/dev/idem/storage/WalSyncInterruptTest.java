package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.ClosedChannelException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An interrupted thread that syncs the {@code -wal} file does not fail the sync. Seen in the
 * webhooks kill test: closing a processor interrupted its worker while it led a group commit, the
 * channel's {@code force} threw {@code ClosedByInterruptException}, and the shared inbox then
 * refused every call ("unusable after a failed write") although the disk was fine.
 */
class WalSyncInterruptTest {
  @TempDir
  Path tmp;

  @AfterEach
  void clearInterrupt() {
    Thread.interrupted();
  }

  @Test
  void aSyncOnAnInterruptedThreadSucceedsAndLeavesTheInterruptSet() throws Exception {
    DiskSync sync = DiskSync.ofWal(tmp.resolve("t.db-wal"));
    Thread.currentThread().interrupt();
    sync.sync();
    assertTrue(Thread.interrupted(), "the caller still sees its interrupt");
    sync.sync();
    assertFalse(Thread.currentThread().isInterrupted());
    sync.close();
    assertThrows(ClosedChannelException.class, sync::sync, "closed is closed: no reopening");
  }
}
