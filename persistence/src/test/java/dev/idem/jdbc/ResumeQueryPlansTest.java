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
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * How SQLite reads each statement a resume runs (issue 28, P4), asked with EXPLAIN QUERY PLAN of
 * the statements as the journal ran them, not timed. A journal has no planner statistics (nothing
 * runs ANALYZE), and SQLite then read each page of the due order through the state index: every
 * unfinished row, each looked up in the table and sorted, for a page of 100 (33 ms a page with
 * 60,000 due, so a resume's cost grew with the square of its size), and it looked for owed
 * outcomes through the same index: every finished row, however few were owed.
 */
class ResumeQueryPlansTest {
  /** More than two pages of the due order (100 each), so that the pages after a cursor run too. */
  private static final int OPERATIONS = 250;

  @TempDir
  Path dir;

  @Test
  void theDuePagesWalkTheDueIndexTheOwedOutcomesTheirsAndNoStatementOfTheResumeScansTheTable() throws Exception {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve("j.db"));
    FaultyDataSource ds = new FaultyDataSource(sqlite);
    List<String> resumeSql;
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).deferredCommitInterval(Duration.ofHours(1)).open()) {
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).resumeConcurrency(4).build();
      for (int i = 0; i < OPERATIONS; i++) {
        executor.enqueue(Operation.builder("charge", Ops.request("{\"n\":" + i + "}")).build());
      }
      ds.executedSql.clear();
      Transport transport = (request, key) -> Ops.ok("{\"id\":7}");

      ResumeSummary summary = executor.resumePending(Map.of("charge",
          ResumeHandler.of(transport, o -> { }, f -> { throw new AssertionError(f); })));

      assertEquals(OPERATIONS, summary.succeeded(), summary.toString());
      resumeSql = ds.executedSql.stream()
          .filter(sql -> sql.toLowerCase(Locale.ROOT).contains("from idem_operation")
              || sql.toLowerCase(Locale.ROOT).startsWith("update idem_operation"))
          .sorted().toList();
    }

    int duePages = 0;
    int owedLooks = 0;
    try (Connection c = sqlite.getConnection()) {
      for (String sql : resumeSql) {
        List<String> plan = Explain.plan(c, sql);
        assertFalse(plan.stream().anyMatch(step -> step.startsWith("SCAN idem_operation") && !step.contains(" INDEX ")),
            "scans the table: " + plan + " for " + sql);
        if (sql.contains("outcome_delivered_at IS NULL AND (state = 'SUCCEEDED'")) {
          owedLooks++;
          assertTrue(plan.stream().anyMatch(step -> step.contains("USING INDEX idem_operation_undelivered")),
              "the look for owed outcomes does not walk idem_operation_undelivered: " + plan + " for " + sql);
        }
        if (sql.contains("ORDER BY (CASE")) {
          duePages++;
          assertTrue(plan.stream().anyMatch(step -> step.contains("USING INDEX idem_operation_due")),
              "a page of the due order does not walk idem_operation_due: " + plan + " for " + sql);
          assertFalse(plan.stream().anyMatch(step -> step.contains("TEMP B-TREE")),
              "a page of the due order sorts: " + plan + " for " + sql);
        }
      }
    }
    assertEquals(2, duePages, "the first page and the pages after a cursor: " + resumeSql);
    assertEquals(1, owedLooks, "the look for owed outcomes: " + resumeSql);
  }
}
