package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.Transport;
import dev.idem.jdbc.support.Explain;
import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * What SQLite runs for each statement that writes one operation (issue 28, P4), read from EXPLAIN
 * of the statements as the journal ran them, not timed. SQLite builds a temporary B-tree
 * ({@code OpenEphemeral}) for an {@code IN} list of more than two constants each time a statement
 * runs, and evaluates a partial index's condition for every row an INSERT or UPDATE writes: the
 * condition {@code state IN ('SUCCEEDED', 'FAILED', 'UNCERTAIN')} of
 * {@code idem_operation_undelivered} (schema version 4) built two of them for every claim,
 * transition and delivery, and one for every begin. On a copy of a 100,000-operation journal,
 * a claim, a transition and a delivery took 29 to 34 µs together with them and 22 without.
 */
class OperationStatementsTest {
  @TempDir
  Path dir;

  @Test
  void noStatementThatWritesOneOperationBuildsATemporaryBTree() throws Exception {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve("j.db"));
    FaultyDataSource ds = new FaultyDataSource(sqlite);
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).open()) {
      Transport transport = (request, key) -> Ops.ok("{\"id\":7}");
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).resumeConcurrency(1).build();
      // An inline call (begin and claim, the attempt and the transition) and a queued one resumed
      // (claim, transition, delivery), one at a time and several at once.
      executor.execute(Operation.builder("charge", Ops.request("{\"n\":0}")).build(), transport);
      for (int i = 1; i <= 3; i++) {
        executor.enqueue(Operation.builder("charge", Ops.request("{\"n\":" + i + "}")).build());
      }
      ResumeSummary summary = executor.resumePending(Map.of("charge",
          ResumeHandler.of(transport, o -> { }, f -> { throw new AssertionError(f); })));
      assertEquals(3, summary.succeeded(), summary.toString());
      IdempotentExecutor lanes = IdempotentExecutor.builder().journal(journal).resumeConcurrency(4).build();
      for (int i = 4; i <= 10; i++) {
        lanes.enqueue(Operation.builder("charge", Ops.request("{\"n\":" + i + "}")).build());
      }
      summary = lanes.resumePending(Map.of("charge",
          ResumeHandler.of(transport, o -> { }, f -> { throw new AssertionError(f); })));
      assertEquals(7, summary.succeeded(), summary.toString());
    }

    List<String> writes = ds.executedSql.stream()
        .filter(sql -> {
          String s = sql.strip().toLowerCase(Locale.ROOT);
          return s.startsWith("insert into idem_operation") || s.startsWith("update idem_operation");
        })
        .sorted().toList();
    // At least the begin (which claims an inline call's row in the same INSERT), a resume's claim,
    // the attempt with its transition and the delivery, each seen on this DataSource.
    assertTrue(writes.size() >= 5, "too few statements seen: " + writes);
    assertTrue(writes.stream().anyMatch(sql -> sql.contains("outcome_delivered_at = ?")), writes.toString());
    try (Connection c = sqlite.getConnection()) {
      for (String sql : writes) {
        List<String> program = Explain.opcodes(c, sql);
        assertFalse(program.contains("OpenEphemeral"), "builds a temporary B-tree each time it runs: " + sql);
      }
    }
  }
}
