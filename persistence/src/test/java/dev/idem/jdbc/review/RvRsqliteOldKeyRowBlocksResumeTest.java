package dev.idem.jdbc.review;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.Transport;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.storage.EmbeddedFiles;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One row the journal cannot decode blocks a whole resume pass: {@code JdbcJournal.remember}
 * (called by {@code findDue}, {@code findUndelivered}, {@code findByState} on every page) rebuilds
 * an {@link OperationId} for EVERY row of the page, the ones {@code Quarantine.decodeAll} just set
 * aside included, with {@code IdempotencyKey.of(row.key())}. A key that today's rules refuse (Idem
 * before 505c8d63 accepted a comma, a double quote or a backslash in a key, so a journal written by
 * an older version holds such keys) makes that call throw {@link IllegalArgumentException} out of
 * {@code findDue}: {@code resumePending} fails with a bare IllegalArgumentException (not a
 * JournalException, and naming no operation), and the other, healthy operations of the page are not
 * resumed. The class Javadoc promises a row that cannot be decoded is quarantined and skipped, and
 * docs/journal.md that one bad row is set aside: here it stops the pass (and on a read-only journal,
 * which cannot flag it, it would stop every pass).
 */
class RvRsqliteOldKeyRowBlocksResumeTest {
  @TempDir
  Path tmp;

  private final VirtualTime time = new VirtualTime(T0);

  @Test
  void aRowWithAKeyTodaysRulesRefuseIsQuarantinedAndTheOthersAreResumed() throws Exception {
    Path dir = tmp.resolve("journal");
    Ops ops = new Ops(7);
    OperationId healthy = ops.id("create-order");
    OperationId old = ops.id("create-order");
    try (JdbcJournal j = JdbcJournal.embedded(dir).closeOnShutdown(false).clock(time.clock()).open()) {
      j.begin(Ops.op(old, "{\"n\":1}"));
      j.begin(Ops.op(healthy, "{\"n\":2}"));
    }
    // What an Idem older than 505c8d63 could write: a key with a comma (it was visible ASCII).
    try (Connection c = DriverManager.getConnection(
            "jdbc:sqlite:" + dir.toRealPath().resolve(EmbeddedFiles.DATABASE_FILE));
        PreparedStatement ps = c.prepareStatement("UPDATE idem_operation SET op_key = ? WHERE op_key = ?")) {
      ps.setString(1, "order,42");
      ps.setString(2, old.key().value());
      assertEquals(1, ps.executeUpdate());
    }

    List<IdempotencyKey> sent = new CopyOnWriteArrayList<>();
    Transport server = (request, key) -> {
      sent.add(key);
      return Ops.ok("{\"id\":1}");
    };
    try (JdbcJournal j = JdbcJournal.embedded(dir).closeOnShutdown(false).clock(time.clock()).open()) {
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(j).owner("app").clock(time.clock())
          .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5).build();
      time.advance(Duration.ofSeconds(1));
      executor.resumePending(Map.of("create-order", ResumeHandler.of(server, o -> { }, f -> { })));

      assertEquals(List.of(healthy.key()), sent, "the healthy operation is resumed despite the row beside it");
      assertEquals(1, j.findQuarantined(10).size(), "the undecodable row is set aside");
    }
  }
}
