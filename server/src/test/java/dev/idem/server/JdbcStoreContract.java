package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The store contract, and what the JDBC stores add for inspection tools: listing and counting,
 * run on SQLite and on PostgreSQL.
 */
abstract class JdbcStoreContract extends StoreContract {
  /** The JDBC stores list records a page at a time, in key order, and count them per state. */
  @Test
  void listsRecordsInPagesAndCountsThemPerState() throws Exception {
    JdbcIdempotencyStore jdbc = (JdbcIdempotencyStore) store();
    List<RecordId> ids = new ArrayList<>();
    for (String caller : new String[] {"bob", "alice"}) {
      for (int i = 0; i < 3; i++) {
        RecordId id = new RecordId(caller, "POST /orders", "k" + i);
        ids.add(id);
        long g = claimed(id, A, "o1", T0);
        if (i == 0) {
          assertTrue(jdbc.complete(id, g, "o1", T0, CREATED, T0.plus(RETENTION)));
        }
      }
    }
    Map<RecordState, Long> counts = jdbc.counts();
    assertEquals(Map.of(RecordState.COMPLETED, 2L, RecordState.IN_FLIGHT, 4L, RecordState.RELEASED, 0L), counts);

    List<RecordId> paged = new ArrayList<>();
    RecordId after = null;
    for (List<StoredRecord> page; !(page = jdbc.list(null, after, 4)).isEmpty(); ) {
      page.forEach(r -> paged.add(r.id()));
      after = page.get(page.size() - 1).id();
    }
    List<RecordId> sorted = new ArrayList<>(ids);
    sorted.sort(Comparator.comparing(RecordId::caller).thenComparing(RecordId::route)
        .thenComparing(RecordId::key));
    assertEquals(sorted, paged, "every record once, in key order, across pages");

    List<StoredRecord> completed = jdbc.list(RecordState.COMPLETED, null, 10);
    assertEquals(2, completed.size());
    assertTrue(completed.stream().allMatch(r -> r.response().orElseThrow().status() == 201));
  }
}
