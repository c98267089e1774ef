package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * A database server's store has no files: a missing privilege of its role (SQLState 42501) is
 * named as such, with the privilege where PostgreSQL's message says which object it was.
 */
class MissingPrivilegeMessageTest {
  @Test
  void aMissingCreateOnTheSchemaIsNamedNotTheFiles() {
    String m = StoreErrors.wrap("journal", "schema migration",
        new SQLException("ERROR: permission denied for schema public", "42501")).getMessage();
    assertFalse(m.contains("files"), m);
    assertTrue(m.contains("lacks a privilege on schema public"), m);
    assertTrue(m.contains("CREATE"), m);
  }

  @Test
  void aMissingTablePrivilegeNamesTheTable() {
    String m = StoreErrors.wrap("webhook inbox", "write on x",
        new SQLException("ERROR: permission denied for table idem_webhook_event", "42501")).getMessage();
    assertFalse(m.contains("files"), m);
    assertTrue(m.contains("lacks a privilege on table idem_webhook_event"), m);
    assertTrue(m.contains("SELECT, INSERT, UPDATE and DELETE"), m);
  }

  @Test
  void anUnnamedOneStillSaysPrivilege() {
    String m = StoreErrors.wrap("journal", "open", new SQLException("ERROR: must be owner of x", "42501")).getMessage();
    assertFalse(m.contains("files"), m);
    assertTrue(m.contains("lacks a privilege"), m);
  }

  @Test
  void aMigrationByARoleThatDoesNotOwnTheTableSaysItNeedsTheOwner() {
    String m = StoreErrors.wrap("journal", "schema migration",
        new SQLException("ERROR: must be owner of table idem_operation", "42501")).getMessage();
    assertTrue(m.contains("table idem_operation"), m);
    assertTrue(m.contains("owner"), m);
    assertFalse(m.contains("SELECT, INSERT, UPDATE and DELETE"), "names privileges the role has: " + m);
  }
}
