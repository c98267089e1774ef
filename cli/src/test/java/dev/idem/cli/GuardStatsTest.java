package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.RecordId;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.StoredResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code idem guard stats} prints the retention numbers the guard reports (seed 000's oldest
 * unexpired key and purge lag), not only the counts. The CLI reads at the real time, so the
 * records are placed relative to it, hours apart, and the test checks the instants the store holds.
 */
class GuardStatsTest {
  @TempDir
  Path dir;

  @Test
  void statsPrintTheOldestUnexpiredKeyAndThePurgeLag() {
    Path db = dir.resolve("guard.db");
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    Instant oldClaim = now.minus(Duration.ofHours(3));
    Instant expired = now.minus(Duration.ofHours(2));
    Instant recentClaim = now.minus(Duration.ofMinutes(10));
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(db)) {
      complete(store, new RecordId("alice", "POST /orders", "k-old"), oldClaim, expired);
      complete(store, new RecordId("alice", "POST /orders", "k-new"), recentClaim, now.plus(Duration.ofHours(24)));
    }

    CliRun r = CliRun.of("guard", "stats", "--store", db.toString());

    assertEquals(0, r.code(), r.err());
    assertTrue(r.out().contains("COMPLETED 2"), r.out());
    assertTrue(r.out().contains("oldest unexpired key: claimed " + recentClaim + " (PT10M"), r.out());
    assertTrue(r.out().contains("purge lag: PT2H") && r.out().contains("expired " + expired + ")"), r.out());
  }

  /** The file system's root has no file name: it used to end in a bare NullPointerException. */
  @Test
  void theRootDirectoryAsTheStoreIsRefusedClearly() {
    CliRun r = CliRun.of("guard", "stats", "--store", dir.getRoot().toString());

    assertEquals(1, r.code(), r.out());
    assertTrue(r.err().startsWith(IdemCli.PREFIX) && r.err().contains("directory")
        && !r.err().contains("NullPointerException"), r.err());
  }

  @Test
  void anEmptyStoreSaysNoneForEach() {
    Path db = dir.resolve("guard.db");
    JdbcIdempotencyStore.sqlite(db).close();

    CliRun r = CliRun.of("guard", "stats", "--store", db.toString());

    assertEquals(0, r.code(), r.err());
    assertTrue(r.out().contains("oldest unexpired key: none"), r.out());
    assertTrue(r.out().contains("purge lag: none"), r.out());
  }

  private static void complete(JdbcIdempotencyStore store, RecordId id, Instant at, Instant expiresAt) {
    long g = ((ClaimAttempt.Claimed) store.claim(id, new Fingerprint("a".repeat(64)), "svc", at, at.plusSeconds(30),
        expiresAt)).generation();
    assertTrue(store.complete(id, g, "svc", at, new StoredResponse(201, Map.of(), new byte[0], false), expiresAt));
  }
}
