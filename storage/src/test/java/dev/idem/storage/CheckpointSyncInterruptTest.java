package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An interrupt that reaches a caller while its commit round syncs an app's H2 database
 * ({@link DiskSync#ofCheckpoint}: {@code CHECKPOINT SYNC}) is still set when the caller returns.
 * H2's file layer takes an interrupt pending at its I/O as a closed channel, reopens the file and
 * clears the interrupt for good (its {@code FileRetryOnInterrupt}): run on the caller's thread, the
 * checkpoint lost it, and a worker told to stop (an executor's shutdownNow, a webhook watchdog) went
 * on as if never told. The interrupt is placed deterministically: the sync interrupts its own
 * thread just before the checkpoint runs, as an interrupt arriving then would.
 */
class CheckpointSyncInterruptTest {
  @TempDir
  Path dir;

  @Test
  void anInterruptDuringTheRoundsCheckpointIsKeptForTheCaller() throws Exception {
    String url = "jdbc:h2:file:" + dir.resolve("j");
    Connection main = DriverManager.getConnection(url);
    try (Statement st = main.createStatement()) {
      st.execute("CREATE TABLE t (id INT PRIMARY KEY)");
    }
    DiskSync checkpoint = DiskSync.ofCheckpoint(DriverManager.getConnection(url));
    DiskSync interruptedDuringSync = new DiskSync() {
      @Override
      public void sync() throws java.sql.SQLException, java.io.IOException {
        Thread.currentThread().interrupt();
        checkpoint.sync();
      }

      @Override
      public void close() throws java.sql.SQLException, java.io.IOException {
        checkpoint.close();
      }
    };
    SingleConnectionStore store = new SingleConnectionStore("journal", "t", main, interruptedDuringSync,
        Duration.ofHours(1), true);
    boolean interruptedAfter;
    try {
      store.write(Durability.SYNC, 1, s -> {
        try (PreparedStatement ps = s.connection().prepareStatement("INSERT INTO t (id) VALUES (1)")) {
          return ps.executeUpdate();
        }
      });
    } finally {
      interruptedAfter = Thread.interrupted();
    }
    assertFalse(store.broken(), "the sync did not fail");
    store.close();
    try (Connection check = DriverManager.getConnection(url);
        Statement st = check.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t")) {
      rs.next();
      assertEquals(1, rs.getInt(1), "the write is committed");
    }
    assertTrue(interruptedAfter, "the interrupt that came during the round's disk sync is kept for the caller");
  }
}
