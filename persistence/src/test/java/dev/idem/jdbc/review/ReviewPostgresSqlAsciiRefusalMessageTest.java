package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Review (round2pg), b890ae08: a SQL_ASCII database (what initdb makes under the C/POSIX locale
 * without -E UTF8, common on older and minimal installs) is refused at open, now also an existing
 * journal that worked before the upgrade, with the reason "a text with a character outside
 * SQL_ASCII (such as a euro sign in a server's reason) could not be stored". That is false for
 * SQL_ASCII: the server neither converts nor checks, pgjdbc talks UTF8, and "5 €" is stored and
 * read back unchanged (shown here on the same database). The advice to pg_dump and restore is then
 * given for a failure that cannot happen; if SQL_ASCII is to be refused (no validation of what
 * other clients write), the message must say that, not this.
 *
 * <p>Decided (pgfix2): refused, with the reason that holds. SQL_ASCII counts a VARCHAR's length in
 * bytes, so a reason within the reason column's 2000 characters but with characters outside ASCII
 * can be too long for it, and an outcome that cannot be recorded after its attempt was sent leaves
 * the operation in flight: the failure the refusal of LATIN1 guards against, reached another way.
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresSqlAsciiRefusalMessageTest {
  @Test
  void aSqlAsciiDatabaseIsOpenedOrRefusedForAReasonThatHolds(PgDatabase db) throws Exception {
    String ascii = db.name() + "_ascii";
    try (Connection c = db.cluster().dataSource("postgres").getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + ascii + " ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
    }
    PGSimpleDataSource ds = db.cluster().dataSource(ascii);
    String reason = "HTTP 402: Karte gesperrt \u2013 Limit 5 \u20ac \u00fcberschritten";
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TEMP TABLE t (reason TEXT)");
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO t VALUES (?)")) {
        ps.setString(1, reason);
        ps.executeUpdate();
      }
      try (ResultSet rs = st.executeQuery("SELECT reason FROM t")) {
        rs.next();
        assertEquals(reason, rs.getString(1), "SQL_ASCII keeps the euro sign and the en dash");
      }
    }
    // But SQL_ASCII counts a column's length in bytes: a text within a VARCHAR's length in characters, some
    // of them outside ASCII, is too long for it. The reason column is VARCHAR(2000), cut at 2000 characters:
    // an outcome whose reason has a euro sign near its end could not be recorded after its attempt was sent.
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TEMP TABLE v (reason VARCHAR(10))");
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO v VALUES (?)")) {
        ps.setString(1, "5 \u20ac".repeat(3) + "!"); // 10 characters, 16 bytes
        SQLException tooLong = assertThrows(SQLException.class, ps::executeUpdate);
        assertEquals("22001", tooLong.getSQLState());
      }
    }
    // Decision (pgfix2): refused, for that reason, worded as it is.
    JournalException refused = assertThrows(JournalException.class, () -> JdbcJournal.dataSource(ds).open());
    String m = refused.getMessage();
    assertFalse(m.contains("could not be stored"),
        "refused for a reason that does not hold on SQL_ASCII (the euro sign was just stored and read back): " + m);
    assertTrue(m.contains("SQL_ASCII"), m);
    assertTrue(m.contains("length in bytes"), m);
    assertTrue(m.contains("ENCODING 'UTF8'"), m);
    try (Connection c = ds.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT to_regclass('idem_operation') IS NULL")) {
      rs.next();
      assertTrue(rs.getBoolean(1), "nothing was created in the refused database");
    }
  }
}
