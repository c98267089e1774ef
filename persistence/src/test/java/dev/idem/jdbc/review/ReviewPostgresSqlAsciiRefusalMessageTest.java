package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.JournalException;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
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
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).open()) {
      assertEquals(4, journal.schemaVersion());
    } catch (JournalException refused) {
      assertFalse(refused.getMessage().contains("could not be stored"),
          "refused for a reason that does not hold on SQL_ASCII (the euro sign was just stored and read back): "
              + refused.getMessage());
    }
  }
}
