package dev.idem.jdbc.review;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.OperationState;
import dev.idem.core.spi.NewOperation;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Review (pgfleet): docs/fleet.md says "The database user needs the right to create tables and
 * indexes in its schema whenever it opens a new journal or one an upgrade migrates", i.e. not when
 * the schema is already current. A least-privilege fleet (schema created once by a deploy job or a
 * DBA, the pods running as a role with SELECT/INSERT/UPDATE/DELETE only, PostgreSQL 15+'s default
 * where PUBLIC no longer has CREATE on schema public) cannot open an up-to-date journal:
 * {@code Migrator.migrateInTransaction} always runs {@code CREATE TABLE IF NOT EXISTS
 * idem_schema_version}, and PostgreSQL checks CREATE on the schema before it looks whether the
 * table exists ("permission denied for schema public").
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresDmlOnlyRoleTest {
  @Test
  void aRoleWithoutCreateOpensAJournalWhoseSchemaIsCurrent(PgDatabase db) throws Exception {
    // The deploy job (the database owner) creates the schema once.
    try (JdbcJournal setup = JdbcJournal.dataSource(db.dataSource()).open()) {
      assertEquals(4, setup.schemaVersion());
    }
    String role = db.name() + "_app";
    try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE ROLE " + role + " LOGIN");
      st.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC"); // PostgreSQL 15+'s default; explicit for older ones
      st.execute("GRANT USAGE ON SCHEMA public TO " + role);
      st.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON idem_operation, idem_schema_version TO " + role);
    }
    PGSimpleDataSource app = db.dataSource();
    app.setUser(role);
    try (JdbcJournal journal = JdbcJournal.dataSource(app).open()) {
      NewOperation op = new Ops(11).newOp("{}");
      journal.begin(op);
      assertTrue(journal.claim(op.id(), "pod-a", T0, Duration.ofMinutes(2)).isPresent());
      assertEquals(OperationState.IN_FLIGHT, journal.find(op.id()).orElseThrow().state());
    } catch (Exception e) {
      fail("a DML-only role could not open a journal whose schema is already at the current version: " + e, e);
    }
  }
}
