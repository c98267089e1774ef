package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Group commit on the log: begins that arrive while a force runs share the next one, and a unit
 * that reads a row whose begin is not yet forced waits for that force (it could lead to a send).
 */
class LoggedStoreGroupCommitTest {
  @TempDir
  Path tmp;
  private final Random random = new Random(11);
  private final AtomicInteger forces = new AtomicInteger();
  private volatile CountDownLatch hold;
  private final CountDownLatch held = new CountDownLatch(1);
  private LoggedStore store;
  private OperationTable table;

  /** Counts forces; while {@link #hold} is set, the first force waits for it. */
  private final WriteAheadLog.Forcer forcer = channel -> {
    CountDownLatch h = hold;
    if (h != null) {
      hold = null;
      held.countDown();
      try {
        assertTrue(h.await(30, TimeUnit.SECONDS));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    forces.incrementAndGet();
  };

  @BeforeEach
  void open() throws Exception {
    Path dir = H2Files.prepare(tmp.resolve("journal"));
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL(H2Files.url(dir));
    store = StoreFixture.open(h2, dir, LoggedStore.CHECKPOINT_BYTES, forcer);
    table = store.table(Dialect.H2);
  }

  @AfterEach
  void close() throws Exception {
    hold = null;
    store.close();
  }

  private OperationId id() {
    return new OperationId("tenant-a", "create-order", IdempotencyKey.generate(random));
  }

  private void begin(OperationId id) {
    try {
      StoreFixture.begin(store, id, "{}");
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private boolean claim(OperationId id) {
    try {
      return store.write(Durability.DEFERRED, id, c -> {
        RawRow r = table.selectForClaim(c, id);
        return table.claim(c, id, r.state(), r.generation(), "owner", r.generation() + 1, 5, 2);
      });
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private void finish(OperationId id) throws Exception {
    store.write(Durability.DEFERRED, id, c -> table.transitionFenced(c, id, "owner", 1,
        new OperationTable.Change(OperationState.SUCCEEDED, null, 3, null, null)));
  }

  @Test
  void beginsThatArriveDuringAForceShareTheNextOne() throws Exception {
    begin(id());
    int before = forces.get();
    CountDownLatch release = new CountDownLatch(1);
    hold = release;
    CompletableFuture<Void> first = CompletableFuture.runAsync(() -> begin(id()));
    assertTrue(held.await(10, TimeUnit.SECONDS), "the first begin never reached its force");

    List<Thread> waiting = new ArrayList<>();
    List<OperationId> ids = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      OperationId id = id();
      ids.add(id);
      Thread t = new Thread(() -> begin(id), "begin-" + i);
      waiting.add(t);
      t.start();
    }
    LogThreads.awaitParked(waiting);
    assertFalse(first.isDone(), "a begin returned before its force");
    release.countDown();
    first.get(10, TimeUnit.SECONDS);
    for (Thread t : waiting) {
      t.join(10_000);
      assertFalse(t.isAlive());
    }
    assertEquals(2, forces.get() - before, "8 begins, 2 forces: the 7 that waited shared one");
    for (OperationId id : ids) {
      assertEquals("PENDING", store.read(id, c -> table.select(c, id, null)).state());
    }
  }

  @Test
  void anOperationsLaterWritesDoNotWaitForOtherBeginsButAClaimWaitsForItsOwnBegin() throws Exception {
    OperationId durable = id();
    begin(durable);
    CountDownLatch release = new CountDownLatch(1);
    hold = release;
    OperationId heldId = id();
    CompletableFuture<Void> heldBegin = CompletableFuture.runAsync(() -> begin(heldId));
    assertTrue(held.await(10, TimeUnit.SECONDS));

    // The durable operation's claim and completion go on while the other begin's force is held.
    CompletableFuture.runAsync(() -> {
      try {
        assertTrue(claim(durable));
        finish(durable);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }).get(10, TimeUnit.SECONDS);

    // A claim of the operation whose begin is not yet durable must wait: it could lead to a send.
    CompletableFuture<Boolean> claimOfHeld = CompletableFuture.supplyAsync(() -> claim(heldId));
    assertThrows(TimeoutException.class, () -> claimOfHeld.get(200, TimeUnit.MILLISECONDS),
        "a claim returned a row whose begin was not yet durable");
    assertFalse(heldBegin.isDone());
    release.countDown();
    heldBegin.get(10, TimeUnit.SECONDS);
    assertTrue(claimOfHeld.get(10, TimeUnit.SECONDS));
  }
}
