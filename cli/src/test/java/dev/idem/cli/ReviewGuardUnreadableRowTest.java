package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.RecordId;
import dev.idem.server.spi.ClaimAttempt;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * One guard record whose state this Idem does not know (a newer Idem's state, a DBA's hand edit
 * such as {@code UPDATE ... SET state = 'released'}) makes both guard commands useless: {@code
 * guard list} and {@code guard stats} end with status 1 and Java's own
 * {@code No enum constant dev.idem.server.RecordState.X}, and the operator sees none of the
 * thousands of healthy records, nor which row is at fault. The journal's commands skip and count
 * such a row ("cannot be read (damaged rows)"); the guard's should too, or at least name the row.
 *
 * <p>Found by a review on 2026-12-06.
 */
class ReviewGuardUnreadableRowTest {
  @TempDir
  Path dir;

  @Test
  void oneRecordInAnUnknownStateDoesNotHideEveryOtherRecord() throws Exception {
    Path db = dir.resolve("guard.db");
    Instant now = Instant.now();
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(db)) {
      assertTrue(store.claim(new RecordId("alice", "POST /orders", "k-healthy"), new Fingerprint("a".repeat(64)),
          "svc", now, now.plusSeconds(300), now.plusSeconds(86_400)) instanceof ClaimAttempt.Claimed);
      assertTrue(store.claim(new RecordId("bob", "POST /orders", "k-odd"), new Fingerprint("b".repeat(64)),
          "svc", now, now.plusSeconds(300), now.plusSeconds(86_400)) instanceof ClaimAttempt.Claimed);
    }
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + db);
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.executeUpdate("UPDATE idem_server_record SET state = 'released' WHERE idem_key = 'k-odd'");
    }

    CliRun list = CliRun.of("guard", "list", "--store", db.toString());
    CliRun stats = CliRun.of("guard", "stats", "--store", db.toString());

    assertAll(
        () -> assertFalse(list.err().contains("No enum constant"), "a Java internal instead of a message: " + list.err()),
        () -> assertEquals(0, list.code(), "list: " + list.err()),
        () -> assertTrue(list.out().contains("k-healthy"), "the healthy record is listed: " + list.out()),
        () -> assertFalse(stats.err().contains("No enum constant"), "a Java internal instead of a message: " + stats.err()),
        () -> assertEquals(0, stats.code(), "stats: " + stats.err()),
        () -> assertTrue(stats.out().contains("IN_FLIGHT 1"), "the healthy record is counted: " + stats.out()));
  }
}
