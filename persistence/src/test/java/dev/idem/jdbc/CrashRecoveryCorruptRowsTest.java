package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.support.Ops;
import dev.idem.storage.EmbeddedFiles;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash recovery at open skips in-doubt rows whose attempts cannot be decoded ("the next read
 * quarantines it"), but reads its next page from the start again: with a page (500) of such rows,
 * the open never ends. Damaged rows must be quarantined, not fatal to the whole journal.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class CrashRecoveryCorruptRowsTest {
  @TempDir
  Path tmp;

  @Test
  void aPageOfInFlightRowsWithDamagedAttemptsDoesNotHangTheOpen() throws Exception {
    Path dir = tmp.resolve("journal");
    Ops ops = new Ops(41);
    try (JdbcJournal j = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
      for (int i = 0; i < 500; i++) {
        NewOperation op = ops.newOp("{\"n\":" + i + "}");
        j.begin(op);
      }
    }
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.toRealPath().resolve(EmbeddedFiles.DATABASE_FILE));
        Statement st = c.createStatement()) {
      // A dead process's claims, whose attempts column was damaged.
      assertEquals(500, st.executeUpdate("UPDATE idem_operation SET state = 'IN_FLIGHT', generation = 1,"
          + " owner = 'dead', lease_expires_at = 1, attempts_json = '{}'"));
    }
    assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
      try (JdbcJournal j = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
        assertEquals(0, j.findDue(Ops.T0.plusSeconds(3600), null, 1000).size());
        assertEquals(500, j.findQuarantined(1000).size(), "each damaged row is set aside for inspection");
      }
    }, "the open must not loop forever over rows it cannot settle");
  }
}
