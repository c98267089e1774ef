package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.StoredResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An embedded store opened read-only, as the CLI opens it: beside the service that writes it, it
 * reads what the service committed, refuses every write, and never writes a byte of the files.
 */
class ReadOnlyStoreTest {
  static final Fingerprint A = new Fingerprint("a".repeat(64));
  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  static final StoredResponse CREATED = new StoredResponse(201, Map.of(), "{}".getBytes(), false);

  @TempDir
  Path dir;

  private long claim(JdbcIdempotencyStore s, RecordId id) {
    ClaimAttempt a = s.claim(id, A, "svc", T0, T0.plus(Duration.ofSeconds(30)), T0.plus(Duration.ofHours(24)));
    return ((ClaimAttempt.Claimed) a).generation();
  }

  @Test
  void readsBesideTheLiveServiceAndRefusesEveryWrite() {
    Path db = dir.resolve("idem.db");
    RecordId done = new RecordId("alice", "POST /orders", "k-done");
    RecordId running = new RecordId("alice", "POST /orders", "k-running");
    try (JdbcIdempotencyStore service = JdbcIdempotencyStore.sqlite(db)) {
      long g = claim(service, done);
      service.complete(done, g, "svc", T0, CREATED, T0.plus(Duration.ofHours(24)));
      claim(service, running);
      service.flush(); // a new claim rides on the next commit (issue 28); readers see commits

      try (JdbcIdempotencyStore reader = JdbcIdempotencyStore.openReadOnly(db)) {
        assertEquals(1L, reader.stats(T0).completed());
        assertEquals(1L, reader.stats(T0).inFlight());
        assertEquals(Set.of(done, running), reader.records(RecordQuery.all(), T0).records().stream()
            .map(RecordSummary::id).collect(Collectors.toSet()));
        assertEquals(201, reader.find(done).orElseThrow().response().orElseThrow().status());

        IdempotencyStoreException e = assertThrows(IdempotencyStoreException.class, () -> claim(reader,
            new RecordId("alice", "POST /orders", "k-new")));
        assertTrue(e.getMessage().contains("read-only; nothing was written"), e.getMessage());
        assertThrows(IdempotencyStoreException.class, () -> reader.purgeExpired(T0.plus(Duration.ofDays(2))));

        // The service goes on writing while the reader is open: the reader keeps its one snapshot
        // (its counts and listings agree), and a reader opened next sees the new record.
        RecordId later = new RecordId("bob", "POST /orders", "k-later");
        claim(service, later);
        service.flush();
        assertEquals(1L, reader.stats(T0).inFlight());
      }
      try (JdbcIdempotencyStore next = JdbcIdempotencyStore.openReadOnly(db)) {
        assertEquals(2L, next.stats(T0).inFlight());
      }
      assertTrue(service.find(done).isPresent(), "the service's store is intact");
    }
  }

  @Test
  void aClosedStoreIsReadWithoutWritingAByte() throws Exception {
    Path db = dir.resolve("idem.db");
    try (JdbcIdempotencyStore service = JdbcIdempotencyStore.sqlite(db)) {
      claim(service, new RecordId("alice", "POST /orders", "k1"));
    }
    Map<String, String> before = digests(dir);
    try (JdbcIdempotencyStore reader = JdbcIdempotencyStore.openReadOnly(db)) {
      assertEquals(1, reader.records(RecordQuery.inFlight(), T0).records().size());
    }
    assertEquals(before, digests(dir), "no file written, none created");
  }

  /**
   * Issue 26: a store left by a killed service (its -wal and -shm files as the service left them,
   * copied while it ran) was read through a -shm index that SQLite rebuilt in place.
   */
  @Test
  void aKilledServicesStoreIsReadWithoutWritingAByte() throws Exception {
    Path killed = Files.createDirectories(dir.resolve("killed"));
    try (JdbcIdempotencyStore service = JdbcIdempotencyStore.sqlite(dir.resolve("idem.db"))) {
      for (int i = 0; i < 20; i++) {
        claim(service, new RecordId("alice", "POST /orders", "k" + i));
      }
      service.flush();
      for (String f : new String[] {"idem.db", "idem.db-wal", "idem.db-shm"}) {
        Files.copy(dir.resolve(f), killed.resolve(f));
      }
    }
    Map<String, String> before = digests(killed);
    try (JdbcIdempotencyStore reader = JdbcIdempotencyStore.openReadOnly(killed.resolve("idem.db"))) {
      assertEquals(20, reader.records(RecordQuery.inFlight(), T0).records().size());
    }
    assertEquals(before, digests(killed), "no byte written");
  }

  @Test
  void aMissingOrForeignFileIsRefusedAndNothingIsCreated() throws Exception {
    Path missing = dir.resolve("nope.db");
    IdempotencyStoreException e = assertThrows(IdempotencyStoreException.class,
        () -> JdbcIdempotencyStore.openReadOnly(missing));
    assertTrue(e.getMessage().contains("no idempotency store at") && e.getMessage().contains("does not exist"),
        e.getMessage());
    assertFalse(Files.exists(missing));

    IdempotencyStoreException d = assertThrows(IdempotencyStoreException.class,
        () -> JdbcIdempotencyStore.openReadOnly(dir));
    assertTrue(d.getMessage().contains("is a directory"), d.getMessage());

    Path other = dir.resolve("other.db");
    try (var c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + other); var st = c.createStatement()) {
      st.execute("CREATE TABLE t (x INTEGER)");
    }
    IdempotencyStoreException f = assertThrows(IdempotencyStoreException.class,
        () -> JdbcIdempotencyStore.openReadOnly(other));
    assertTrue(f.getMessage().contains("not an Idem idempotency store"), f.getMessage());
  }

  private static Map<String, String> digests(Path d) throws Exception {
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> files = Files.list(d)) {
      for (Path f : files.toList()) {
        out.put(f.getFileName().toString(),
            HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f))));
      }
    }
    return out;
  }
}
