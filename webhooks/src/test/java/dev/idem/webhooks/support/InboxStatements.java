package dev.idem.webhooks.support;

import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.storage.StoreOpener;
import dev.idem.webhooks.internal.InboxStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;

/**
 * The SQL an inbox store really runs, as prepared, for the tests that ask the database how it
 * plans those statements (SQLite's {@code EXPLAIN QUERY PLAN}, PostgreSQL's {@code EXPLAIN}).
 */
public final class InboxStatements {
  private InboxStatements() {
  }

  /** What a test does with the store whose statements it reads. */
  public interface Work {
    void run(InboxStore store) throws Exception;
  }

  /**
   * Opens an inbox store on {@code dataSource} (migrating it), inserts three PENDING events
   * {@code acme/evt_0..2} received and due at 1000, 1001 and 1002, then runs {@code work}.
   *
   * @return the statements {@code work} made the store prepare, in order
   */
  public static List<String> of(DataSource dataSource, Work work) throws Exception {
    return List.copyOf(run(dataSource, (store, recording) -> work.run(store)).executedSql);
  }

  /** What a test does with the store, given the data source that records its statements. */
  public interface RecordedWork {
    void run(InboxStore store, FaultyDataSource recording) throws Exception;
  }

  /**
   * As {@link #of}, for a test that reads the recording itself, such as to count statements by
   * verb ({@link FaultyDataSource#statements}): it starts empty when {@code work} runs, after the
   * three events are inserted.
   *
   * @return the recording, once the store is closed
   */
  public static FaultyDataSource run(DataSource dataSource, RecordedWork work) throws Exception {
    FaultyDataSource ds = new FaultyDataSource(dataSource);
    StoreOpener opener = new StoreOpener(InboxStore.SCHEMA, false, Duration.ofMillis(50), Clock.systemUTC());
    try (InboxStore store = opener.openDataSource(ds, (name, dialect, s, version, opened) ->
        new InboxStore(dialect, s, opened, name))) {
      for (int i = 0; i < 3; i++) {
        store.insert("acme", "evt_" + i, "order.paid", new byte[] {(byte) i}, List.of(), false,
            "{}".getBytes(StandardCharsets.UTF_8), null, 1000 + i);
      }
      ds.executedSql.clear();
      ds.statements.clear();
      work.run(store, ds);
    }
    return ds;
  }
}
