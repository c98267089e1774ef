package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.jdbc.support.Explain;
import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * {@code JdbcJournal.findByState(state, names, after, limit)} on SQLite, what the drain check of an
 * outbox dispatcher's {@code shutdown(timeout)} reads: how SQLite reads its pages (asked with
 * EXPLAIN QUERY PLAN of the statements as the journal ran them), and the names it cannot ask
 * about or filter in its query.
 */
class SqliteFindByStateOfNamesTest {
  @TempDir
  Path dir;

  private static OperationId id(String operation, int i) {
    return new OperationId("default", operation, IdempotencyKey.of("k-" + i));
  }

  @Test
  void itsPagesComparePendingNamesOnTheDueIndexReadInFlightByStateAndLockNothing() throws Exception {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve("j.db"));
    FaultyDataSource ds = new FaultyDataSource(sqlite);
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).deferredCommitInterval(Duration.ofHours(1)).open()) {
      for (int i = 0; i < 6; i++) {
        journal.begin(Ops.op(id(i % 2 == 0 ? "create-order" : "a-refund", i), "{}"));
      }
      journal.flush();
      ds.executedSql.clear();
      for (OperationState state : List.of(OperationState.PENDING, OperationState.IN_FLIGHT)) {
        for (Set<String> names : List.of(Set.of("create-order"), Set.of("create-order", "ship"))) {
          List<OperationRecord> first = journal.findByState(state, names, null, 2);
          if (!first.isEmpty()) {
            journal.findByState(state, names, first.get(first.size() - 1).id(), 2);
          }
        }
      }
    }
    List<String> pages = ds.executedSql.stream().filter(sql -> sql.contains("state = ?")).toList();
    assertEquals(6, pages.size(), "PENDING with one name and with two, a first page and one after a cursor;"
        + " IN_FLIGHT's first pages: " + pages);
    try (Connection c = sqlite.getConnection()) {
      for (String sql : pages) {
        assertFalse(sql.toUpperCase(Locale.ROOT).contains("FOR UPDATE") || sql.toUpperCase(Locale.ROOT).contains("LOCKED"),
            "a read that takes or skips locks: " + sql);
        List<String> plan = Explain.plan(c, sql);
        assertFalse(plan.stream().anyMatch(step -> step.startsWith("SCAN idem_operation") && !step.contains(" INDEX ")),
            "scans the table: " + plan + " for " + sql);
        // The sort left is of the rows of these names only (no index is in identity order by state).
        String index = sql.contains("INDEXED BY idem_operation_due") ? "idem_operation_due" : "idem_operation_state_updated";
        assertTrue(plan.stream().anyMatch(step -> step.contains("USING INDEX " + index)), plan + " for " + sql);
      }
    }
    assertEquals(4, pages.stream().filter(sql -> sql.contains("INDEXED BY idem_operation_due")).count(),
        "the PENDING pages compare the names on the due index's entries, before a row is read: " + pages);
  }

  @Test
  void namesItCannotAskAboutMatchNothingAndManyNamesAreFilteredHere() throws Exception {
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      journal.begin(Ops.op(id("t?", 0), "{}"));
      List<OperationId> orders = new ArrayList<>();
      for (int i = 1; i <= 5; i++) {
        journal.begin(Ops.op(id("a-refund", i), "{}"));
        orders.add(journal.begin(Ops.op(id("create-order", i), "{}")).record().id());
      }

      // The driver would send "t\uD800" as "t?", another name; begin refuses it, so none has it.
      assertEquals(List.of(), journal.findByState(OperationState.PENDING, Set.of("t\uD800"), null, 10));
      assertEquals(orders, ids(journal.findByState(OperationState.PENDING, Set.of("t\uD800", "create-order"), null,
          10)));

      Set<String> many = new HashSet<>(Set.of("create-order"));
      for (int i = 0; many.size() <= 64; i++) {
        many.add("other-" + i);
      }
      List<OperationId> paged = new ArrayList<>();
      OperationId after = null;
      List<OperationRecord> page;
      while (!(page = journal.findByState(OperationState.PENDING, many, after, 2)).isEmpty()) {
        paged.addAll(ids(page));
        after = page.get(page.size() - 1).id();
      }
      assertEquals(orders, paged, "past 64 names, read and filtered in the process, in the same order");
    }
  }

  private static List<OperationId> ids(List<OperationRecord> page) {
    return page.stream().map(OperationRecord::id).toList();
  }
}
