package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.JournalException;
import dev.idem.core.OperationState;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.support.Ops;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * H2 commits each DDL statement on its own, and with it whatever the migration's transaction held
 * (the version rows of the migrations before). A process killed during a migration therefore
 * leaves every migration before it recorded, a prefix of its statements applied, and its own
 * version unrecorded; the next open runs it again from its first statement. This test makes that
 * state for every cut point of every H2 migration (after each statement, including after the last
 * one, before its version row committed) and checks that the next open finishes the schema, which
 * then matches a fresh journal's, and works.
 */
class H2MigrationCutAnywhereTest {
  private static final String FOLDER = "dev/idem/jdbc/migrations/h2/";

  @TempDir
  Path tmp;

  @Test
  void aMigrationCutAfterAnyOfItsStatementsIsFinishedByTheNextOpen() throws Exception {
    List<List<String>> migrations = migrations();
    String expected;
    JdbcDataSource fresh = h2("fresh");
    try (JdbcJournal j = JdbcJournal.dataSource(fresh).open()) {
      assertEquals(migrations.size(), j.schemaVersion());
    }
    expected = shape(fresh);

    int cuts = 0;
    for (int m = 0; m < migrations.size(); m++) {
      List<String> statements = migrations.get(m);
      for (int applied = 1; applied <= statements.size(); applied++) {
        String name = "v" + (m + 1) + "-after-" + applied;
        JdbcDataSource h2 = h2(name);
        try (Connection c = h2.getConnection(); Statement st = c.createStatement()) {
          // The version table as the migrator creates it before the first migration.
          st.execute("CREATE TABLE idem_schema_version (version INT PRIMARY KEY, description VARCHAR(200) NOT NULL,"
              + " applied_at BIGINT NOT NULL)");
          for (int done = 0; done < m; done++) {
            for (String s : migrations.get(done)) {
              st.execute(s);
            }
            try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO idem_schema_version (version, description, applied_at) VALUES (?, 'x', 0)")) {
              ps.setInt(1, done + 1);
              ps.executeUpdate();
            }
          }
          for (String s : statements.subList(0, applied)) {
            st.execute(s);
          }
        }
        Ops ops = new Ops(m * 100L + applied);
        NewOperation op = ops.newOp("{\"cut\":\"" + name + "\"}");
        try (JdbcJournal j = JdbcJournal.dataSource(h2).open()) {
          assertEquals(migrations.size(), j.schemaVersion(), name);
          assertTrue(j.begin(op).created(), name);
          assertEquals(OperationState.PENDING, j.find(op.id()).orElseThrow().state(), name);
        } catch (JournalException e) {
          fail("the H2 journal cut after statement " + applied + " of V" + (m + 1) + " does not open: "
              + e.getMessage() + (e.getCause() == null ? "" : " / " + e.getCause().getMessage()));
        }
        assertEquals(expected, shape(h2), name + ": the finished schema differs from a fresh journal's");
        cuts++;
      }
    }
    assertTrue(cuts >= 10, "cut points tried: " + cuts);
  }

  private JdbcDataSource h2(String name) {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + tmp.resolve(name) + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    return h2;
  }

  /** The journal table's columns (name, type, nullability, default) and its indexes, as H2 lists them. */
  private static String shape(JdbcDataSource h2) throws Exception {
    TreeSet<String> parts = new TreeSet<>();
    try (Connection c = h2.getConnection(); Statement st = c.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT COLUMN_NAME, DATA_TYPE, IS_NULLABLE, COLUMN_DEFAULT"
          + " FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'IDEM_OPERATION'")) {
        while (rs.next()) {
          parts.add("column " + rs.getString(1) + " " + rs.getString(2) + " " + rs.getString(3) + " " + rs.getString(4));
        }
      }
      try (ResultSet rs = st.executeQuery("SELECT INDEX_NAME FROM INFORMATION_SCHEMA.INDEXES"
          + " WHERE TABLE_NAME = 'IDEM_OPERATION'")) {
        while (rs.next()) {
          parts.add("index " + rs.getString(1));
        }
      }
      try (ResultSet rs = st.executeQuery("SELECT version FROM idem_schema_version ORDER BY version")) {
        while (rs.next()) {
          parts.add("version " + rs.getInt(1));
        }
      }
    }
    return String.join("\n", parts);
  }

  /** Each H2 migration's statements, in order (comment lines dropped, split at a line-ending semicolon). */
  private static List<List<String>> migrations() throws Exception {
    List<List<String>> result = new ArrayList<>();
    for (String line : read("index.txt").split("\n")) {
      String name = line.strip();
      if (name.isEmpty() || name.startsWith("#")) {
        continue;
      }
      List<String> statements = new ArrayList<>();
      StringBuilder current = new StringBuilder();
      for (String l : read(name).split("\n")) {
        String t = l.strip();
        if (t.isEmpty() || t.startsWith("--")) {
          continue;
        }
        current.append(l).append('\n');
        if (t.endsWith(";")) {
          String s = current.toString().strip();
          statements.add(s.substring(0, s.length() - 1));
          current.setLength(0);
        }
      }
      result.add(statements);
    }
    return result;
  }

  private static String read(String name) throws Exception {
    try (InputStream in = JdbcJournal.class.getClassLoader().getResourceAsStream(FOLDER + name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + FOLDER + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
