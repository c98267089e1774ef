package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.server.spi.IdempotencyStore;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(PostgresExtension.class)
class PostgresStoreTest extends StoreContract {
  private PgDatabase db;

  @BeforeEach
  void database(PgDatabase db) {
    this.db = db;
  }

  @Override
  IdempotencyStore open() {
    return JdbcIdempotencyStore.postgres(db.dataSource());
  }

  /** A table from before issue 27 (no claimed_at, no taken_over) is upgraded in place. */
  @Test
  void anOlderSchemaIsUpgradedInPlace() throws Exception {
    try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE idem_server_record (caller TEXT NOT NULL, route TEXT NOT NULL, idem_key TEXT NOT NULL,"
          + " fingerprint TEXT NOT NULL, state TEXT NOT NULL, generation BIGINT NOT NULL, owner TEXT NOT NULL,"
          + " lease_until BIGINT NOT NULL, expires_at BIGINT NOT NULL, status INTEGER, headers TEXT, body BYTEA,"
          + " body_omitted INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (caller, route, idem_key))");
      st.execute("INSERT INTO idem_server_record VALUES ('alice', 'POST /orders', 'k1', '" + "a".repeat(64)
          + "', 'COMPLETED', 1, 'o1', 0, " + T0.plus(RETENTION).toEpochMilli() + ", 201, '', '\\x7b7d', 0)");
    }
    assertEquals(RecordState.COMPLETED, store().find(ID).orElseThrow().state());
    assertEquals(Instant.EPOCH, store().records(RecordQuery.all(), T0).records().get(0).claimedAt());
    assertEquals(1, claimed(new RecordId("alice", "POST /orders", "k2"), A, "o2", T0));
    store().close();
    store = null;
    store(); // and a second open finds nothing left to do
  }
}
