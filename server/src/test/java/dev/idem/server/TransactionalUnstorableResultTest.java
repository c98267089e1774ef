package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.StoredRecord;
import dev.idem.server.support.AppDb;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactional mode: a failure of the guard's own step after the handler, other than the
 * database's, rolls back the handler's writes with the claim instead of committing half.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class TransactionalUnstorableResultTest {
  @TempDir
  Path dir;
  private final VirtualTime time = new VirtualTime();
  private AppDb db;
  private JdbcIdempotencyStore store;
  private IdempotencyGuard guard;

  @AfterEach
  void tearDown() {
    if (guard != null) {
      guard.close();
    }
    if (store != null) {
      store.close();
    }
  }

  /**
   * The handler inserts its row and answers a status the store cannot keep (600). The
   * IllegalArgumentException is not a SQLException: before the fix nothing rolled back, and
   * restoring auto-commit in the finally block committed the app's row and an IN_FLIGHT claim
   * without a result, so "all or none" broke and after the 30 s lease a retry ran the handler again.
   */
  @Test
  void aResultTheGuardCannotStoreRollsBackTheHandlersWritesWithTheClaim() throws Exception {
    db = AppDb.sqlite(dir.resolve("app.db"));
    store = db.openStore();
    db.createOrders();
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler()).purgeInterval(null)
        .build();
    GuardRequest request = new GuardRequest("POST", "/orders", null, "application/json", List.of("k-600"),
        "tenant-1", GuardRequest.BodyReader.of("{\"item\":\"A1\"}".getBytes(StandardCharsets.UTF_8)));
    RecordId id = new RecordId("tenant-1", "POST /orders", "k-600");
    TransactionalHandler handler = (c, claim, body) -> {
      AppDb.insertOrder(c, claim.operationId(), new String(body, StandardCharsets.UTF_8));
      return CapturedResponse.json(600, "{}");
    };

    assertThrows(RuntimeException.class, () -> guard.inTransaction(db.dataSource(), request, handler));

    Optional<StoredRecord> record = store.find(id);
    int orders = db.orders(id.operationId());
    assertEquals(0, orders, "the handler's row committed although the guard failed to store its result; record: "
        + record);
    assertEquals(Optional.empty(), record.map(StoredRecord::state), "no claim left behind");
  }
}
