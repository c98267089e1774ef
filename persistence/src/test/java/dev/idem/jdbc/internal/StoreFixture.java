package dev.idem.jdbc.internal;

import dev.idem.core.OperationId;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;

/** Opens a {@link LoggedStore} on its own, outside a journal, for the tests of this package. */
final class StoreFixture {
  private StoreFixture() {
  }

  /** Migrates the schema on a writer from {@code ds}, then opens the store with one reader. */
  static LoggedStore open(DataSource ds, Path dir, long checkpointBytes, WriteAheadLog.Forcer forcer)
      throws Exception {
    Connection writer = ds.getConnection();
    new Migrator(Dialect.H2, Clock.systemUTC()).migrate(writer);
    return LoggedStore.open("test", writer, List.of(ds.getConnection()), null, dir.resolve(H2Files.LOG_FILE),
        Duration.ofMillis(100), checkpointBytes, forcer);
  }

  /** A begin at the store level: a new PENDING row, durable when this returns. */
  static boolean begin(LoggedStore store, OperationId id, String requestJson) throws Exception {
    OperationTable table = store.table(Dialect.H2);
    return store.write(Durability.SYNC, id, c -> table.insertIfAbsent(c,
        new OperationTable.NewRow(id, null, "a".repeat(64), requestJson, 1_000)));
  }
}
