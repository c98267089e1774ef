package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A PostgreSQL database that is not UTF8 is refused at open, before anything is created in it or
 * sent: its encoding named, and what to do.
 */
@ExtendWith(PostgresExtension.class)
class PostgresNonUtf8RefusedTest {
  @Test
  void aLatin1DatabaseIsRefusedAtOpenNamingItsEncodingAndNothingIsCreated(PgDatabase db) throws Exception {
    String latin1 = db.name() + "_latin1";
    try (Connection c = db.cluster().dataSource("postgres").getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + latin1 + " ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
    }
    PGSimpleDataSource ds = db.cluster().dataSource(latin1);

    JournalException refused = assertThrows(JournalException.class, () -> JdbcJournal.dataSource(ds).open());

    String m = refused.getMessage();
    assertTrue(m.contains("has encoding LATIN1, not UTF8"), m);
    assertTrue(m.contains("ENCODING 'UTF8'"), m);
    try (Connection c = ds.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT to_regclass('idem_schema_version') IS NULL")) {
      rs.next();
      assertTrue(rs.getBoolean(1), "nothing created in the refused database");
    }
  }

  @Test
  void aUtf8DatabaseOpens(PgDatabase db) throws Exception {
    try (JdbcJournal j = JdbcJournal.dataSource(db.dataSource()).open()) {
      assertFalse(j.toString().isEmpty());
    }
  }
}
