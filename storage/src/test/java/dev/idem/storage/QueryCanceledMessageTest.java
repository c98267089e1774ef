package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL's 57014 (query_canceled) is one statement cancelled, most often by the app's own
 * statement_timeout: not the database shutting down, which 57P01-57P03 are.
 */
class QueryCanceledMessageTest {
  @Test
  void aStatementTimeoutIsNamedNotAShutdown() {
    String m = StoreErrors.wrap("journal", "write on x",
        new SQLException("ERROR: canceling statement due to statement timeout", "57014")).getMessage();
    assertFalse(m.contains("shutting down"), m);
    assertTrue(m.contains("statement_timeout"), m);
  }

  @Test
  void aCancelRequestIsNamedNotAShutdown() {
    String m = StoreErrors.wrap("journal", "write on x",
        new SQLException("ERROR: canceling statement due to user request", "57014")).getMessage();
    assertFalse(m.contains("shutting down"), m);
    assertTrue(m.contains("cancelled"), m);
  }

  @Test
  void anAdminShutdownIsStillOne() {
    String m = StoreErrors.wrap("journal", "write on x",
        new SQLException("FATAL: terminating connection due to administrator command", "57P01")).getMessage();
    assertTrue(m.contains("shutting down"), m);
  }
}
