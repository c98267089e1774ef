package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 28: a unit that writes with one statement runs without the SAVEPOINT and RELEASE around
 * it (two of a durable call's statements each time), and is still atomic: SQLite undoes a failed
 * statement whole, and a failure that took the open transaction with it breaks the store, as a
 * lost savepoint does.
 */
class SingleStatementUnitTest {
  @TempDir
  Path dir;

  private final List<String> executed = new CopyOnWriteArrayList<>();

  @Test
  void aSingleStatementUnitRunsOneStatementAndOthersKeepTheirSavepoint() throws Exception {
    try (SingleConnectionStore store = store(Duration.ofHours(1))) {
      store.write(Durability.SYNC, null, s -> update(s, "CREATE TABLE t(x INTEGER PRIMARY KEY)"));
      executed.clear();

      store.write(Durability.DEFERRED, 1, SqlWork.singleStatement(s -> update(s, "INSERT INTO t VALUES (1)")));
      assertEquals(List.of("INSERT"), executed);

      executed.clear();
      store.write(Durability.DEFERRED, 2, s -> update(s, "INSERT INTO t VALUES (2)"));
      assertEquals(List.of("SAVEPOINT", "INSERT", "RELEASE"), executed);
    }
  }

  @Test
  void aFailedSingleStatementUnitLeavesNothingAndTheTransactionGoesOn() throws Exception {
    try (SingleConnectionStore store = store(Duration.ofHours(1))) {
      store.write(Durability.SYNC, null, s -> update(s, "CREATE TABLE t(x INTEGER PRIMARY KEY)"));
      // First after a commit: the transaction sqlite-jdbc opened at the commit is still there after it.
      assertThrows(JournalException.class, () -> store.write(Durability.DEFERRED, 6,
          SqlWork.singleStatement(s -> update(s, "INSERT INTO t VALUES (6), (6)"))));
      assertFalse(store.broken());
      store.write(Durability.DEFERRED, 1, SqlWork.singleStatement(s -> update(s, "INSERT INTO t VALUES (1)")));

      // One statement that writes row 5 and then fails on the duplicate 1: SQLite must undo row 5 too.
      assertThrows(JournalException.class, () -> store.write(Durability.DEFERRED, 5,
          SqlWork.singleStatement(s -> update(s, "INSERT INTO t VALUES (5), (1)"))));
      store.write(Durability.SYNC, 2, SqlWork.singleStatement(s -> update(s, "INSERT INTO t VALUES (2)")));

      assertFalse(store.broken());
      store.flush();
    }
    assertEquals(List.of(1L, 2L), committedRows());
  }

  @Test
  void onH2TooAFailedSingleStatementUnitLeavesNothing() throws Exception {
    String url = "jdbc:h2:file:" + dir.resolve("h2") + ";TRACE_LEVEL_FILE=0";
    try (SingleConnectionStore store = new SingleConnectionStore("journal", "t", counting(DriverManager.getConnection(url)),
        null, Duration.ofHours(1), false)) {
      store.write(Durability.SYNC, null, s -> update(s, "CREATE TABLE t(x INTEGER PRIMARY KEY)"));
      store.write(Durability.DEFERRED, 1, SqlWork.singleStatement(s -> update(s, "INSERT INTO t VALUES (1)")));
      executed.clear();

      assertThrows(JournalException.class, () -> store.write(Durability.DEFERRED, 5,
          SqlWork.singleStatement(s -> update(s, "INSERT INTO t VALUES (5), (1)"))));
      assertEquals(List.of("INSERT"), executed);
      store.write(Durability.SYNC, 2, SqlWork.singleStatement(s -> update(s, "INSERT INTO t VALUES (2)")));

      assertFalse(store.broken());
    }
    try (Connection c = DriverManager.getConnection(url);
        ResultSet rs = c.createStatement().executeQuery("SELECT x FROM t ORDER BY x")) {
      List<Long> rows = new java.util.ArrayList<>();
      while (rs.next()) {
        rows.add(rs.getLong(1));
      }
      assertEquals(List.of(1L, 2L), rows);
    }
  }

  @Test
  void aFailureThatTookTheTransactionBreaksTheStore() throws Exception {
    SingleConnectionStore store = store(Duration.ofHours(1));
    try {
      store.write(Durability.SYNC, null, s -> update(s, "CREATE TABLE t(x INTEGER PRIMARY KEY, b BLOB)"));
      store.write(Durability.SYNC, null, s -> {
        try (ResultSet rs = s.connection().createStatement().executeQuery("PRAGMA page_count")) {
          rs.next();
          return s.connection().createStatement().execute("PRAGMA max_page_count = " + (rs.getLong(1) + 4));
        }
      });
      store.write(Durability.DEFERRED, 1, SqlWork.singleStatement(s -> update(s, "INSERT INTO t VALUES (1, NULL)")));

      // SQLITE_FULL: SQLite may roll back the statement or the whole transaction (with row 1).
      JournalException full = assertThrows(JournalException.class, () -> store.write(Durability.DEFERRED, 2,
          SqlWork.singleStatement(s -> update(s, "INSERT INTO t VALUES (2, zeroblob(1000000))"))));

      // The SQLite of the BOM rolls the whole transaction back on this SQLITE_FULL, row 1 with it.
      assertTrue(store.broken(), "the store saw that the transaction is gone");
      assertTrue(full.getMessage().contains("unusable"), full.getMessage());
      assertThrows(JournalException.class, store::flush);
    } finally {
      try {
        store.close();
      } catch (JournalException closeOfABrokenStore) {
        // close reports the broken store again
      }
    }
    assertEquals(List.of(), committedRows());
  }

  private List<Long> committedRows() throws SQLException {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("db"));
        ResultSet rs = c.createStatement().executeQuery("SELECT x FROM t ORDER BY x")) {
      List<Long> rows = new java.util.ArrayList<>();
      while (rs.next()) {
        rows.add(rs.getLong(1));
      }
      return rows;
    }
  }

  private static int update(SqlSession s, String sql) throws SQLException {
    PreparedStatement ps = s.prepare(sql);
    try {
      return ps.executeUpdate();
    } finally {
      s.release(ps);
    }
  }

  private SingleConnectionStore store(Duration deferred) throws SQLException {
    Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("db"));
    try (Statement st = c.createStatement()) {
      st.execute("PRAGMA journal_mode=WAL");
    }
    return new SingleConnectionStore("journal", "t", counting(c), null, deferred, false);
  }

  /** The connection, recording the first word of every prepared statement it executes. */
  private Connection counting(Connection c) {
    return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
        (proxy, m, args) -> {
          Object result = invoke(c, m, args);
          if (m.getName().equals("prepareStatement")) {
            String verb = ((String) args[0]).strip().split("\\s+")[0].toUpperCase(Locale.ROOT);
            PreparedStatement ps = (PreparedStatement) result;
            return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {PreparedStatement.class},
                (p, pm, pargs) -> {
                  if (pm.getName().startsWith("execute")) {
                    executed.add(verb);
                  }
                  return invoke(ps, pm, pargs);
                });
          }
          return result;
        });
  }

  private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
