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
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Review (round2pg), d80a2a13: a schema at an older version opened, after an Idem upgrade, by the
 * fleet's app role. That role has everything docs/fleet.md "Database privileges" lists (USAGE on
 * the schema, SELECT/INSERT/UPDATE/DELETE on the tables) and CREATE on the schema too (PostgreSQL
 * 14 and earlier grant it to every role on {@code public}; or a DBA granted it, since the docs say
 * CREATE is what a migration needs). The tables belong to the deploy role. The migration
 * (V4's CREATE INDEX on idem_operation) is refused with "must be owner of table idem_operation"
 * (42501), which {@code StoreErrors.missingPrivilege} cannot match, so the open says the role lacks
 * "USAGE on the schema, and SELECT, INSERT, UPDATE and DELETE on its tables": privileges it has.
 * Nothing says the migration must run as the tables' owner, and the docs promise "a message that
 * names the missing privilege".
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresMigrationByNonOwnerMessageTest {
  @Test
  void aMigrationRefusedForNotOwningTheTableSaysSoNotThatTheRoleLacksDml(PgDatabase db) throws Exception {
    try (JdbcJournal setup = JdbcJournal.dataSource(db.dataSource()).open()) {
      assertEquals(4, setup.schemaVersion());
    }
    String role = db.name() + "_app";
    try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
      // The schema as the previous Idem release (version 3) left it: V4 only adds this index.
      st.execute("DROP INDEX idem_operation_due");
      st.execute("DELETE FROM idem_schema_version WHERE version = 4");
      st.execute("CREATE ROLE " + role + " LOGIN");
      st.execute("GRANT USAGE, CREATE ON SCHEMA public TO " + role);
      st.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON idem_operation, idem_schema_version TO " + role);
    }
    PGSimpleDataSource app = db.dataSource();
    app.setUser(role);

    JournalException e = assertThrows(JournalException.class, () -> JdbcJournal.dataSource(app).open());

    String m = e.getMessage();
    assertFalse(m.contains("lacks a privilege the journal needs (USAGE on the schema, and SELECT, INSERT, UPDATE and"
        + " DELETE on its tables"), "the message names privileges the role has, and not what is missing: " + m);
    assertTrue(m.contains("owner"), "the message does not say that migrating needs the tables' owner: " + m);
  }
}
