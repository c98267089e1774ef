package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.StoredResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: the guard's store shares its file with the app's connections, whose last close removes
 * the {@code -wal} file legitimately, so a crash followed by a missing {@code -wal} file was not
 * refused as it is for the journal: once the database held the store's id (after any checkpoint),
 * an operator's deleted {@code -wal} file opened without a word, every record in it gone. The
 * corruption run missed it (its fixture never checkpoints). A {@code -shm} index left beside no
 * {@code -wal} file, saying frames were committed, is now refused; SQLite's own clean close removes
 * both. Failed before (the store opened and the record was missing; checked with the check removed).
 */
class DeletedWalTest {
  private static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");
  private static final Fingerprint PRINT = new Fingerprint("c".repeat(64));

  @TempDir
  Path dir;

  @Test
  void aWalFileDeletedAfterACrashIsRefusedNotOpenedWithoutItsCommits() throws Exception {
    Path db = dir.resolve("live").resolve("idem.db");
    Files.createDirectories(db.getParent());
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(db)) {
      write(store, "k-first"); // closed cleanly: the database holds the store's id from here on
    }
    Path crashed = dir.resolve("crashed");
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(db)) {
      write(store, "k-second");
      // The files as a kill -9 leaves them: every commit synced, the -wal and -shm still there.
      Files.createDirectories(crashed);
      for (String f : new String[] {"idem.db", "idem.db-wal", "idem.db-shm", "idem.db.id", "idem.db.open"}) {
        Files.copy(db.resolveSibling(f), crashed.resolve(f));
      }
    }
    Path copy = crashed.resolve("idem.db");

    Files.delete(crashed.resolve("idem.db-wal"));

    IdempotencyStoreException e = assertThrows(IdempotencyStoreException.class, () -> {
      try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(copy)) {
        store.find(id("k-second")); // what a silent open would have lost
      }
    });
    assertTrue(e.getMessage().contains("not closed cleanly") && e.getMessage().contains("idem.db-wal"),
        e.getMessage());
  }

  @Test
  void aCrashImageWithItsWalFileOpensWithEveryRecord() throws Exception {
    Path db = dir.resolve("live").resolve("idem.db");
    Files.createDirectories(db.getParent());
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(db)) {
      write(store, "k-first");
    }
    Path crashed = dir.resolve("crashed");
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(db)) {
      write(store, "k-second");
      Files.createDirectories(crashed);
      for (String f : new String[] {"idem.db", "idem.db-wal", "idem.db-shm", "idem.db.id", "idem.db.open"}) {
        Files.copy(db.resolveSibling(f), crashed.resolve(f));
      }
    }
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(crashed.resolve("idem.db"))) {
      assertEquals(201, store.find(id("k-second")).orElseThrow().response().orElseThrow().status());
      assertEquals(201, store.find(id("k-first")).orElseThrow().response().orElseThrow().status());
    }
  }

  private static RecordId id(String key) {
    return new RecordId("caller", "POST /orders", key);
  }

  private static void write(JdbcIdempotencyStore store, String key) {
    long g = ((ClaimAttempt.Claimed) store.claim(id(key), PRINT, "svc/1", T0, T0.plusSeconds(30),
        T0.plus(Duration.ofDays(3650)))).generation();
    store.complete(id(key), g, "svc/1", T0, new StoredResponse(201, Map.of("Location", List.of("/orders/1")),
        "{}".getBytes(), false), T0.plus(Duration.ofDays(3650)));
  }
}
