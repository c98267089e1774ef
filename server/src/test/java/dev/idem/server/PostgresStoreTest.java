package dev.idem.server;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(PostgresExtension.class)
class PostgresStoreTest extends JdbcStoreContract {
  private PgDatabase db;

  @BeforeEach
  void database(PgDatabase db) {
    this.db = db;
  }

  @Override
  IdempotencyStore open() {
    return JdbcIdempotencyStore.postgres(db.dataSource());
  }
}
