package dev.idem.examples.corruption;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.RecordId;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.StoredRecord;
import dev.idem.server.spi.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** The server guard's embedded SQLite store: completed records with their stored answers, and claims in flight. */
final class GuardSubject implements Subject {
  private static final int RECORDS = 40;
  private static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");
  private static final Fingerprint PRINT = new Fingerprint("c".repeat(64));

  @Override
  public String name() {
    return "guard";
  }

  @Override
  public String databaseFile() {
    return "idem.db";
  }

  private static RecordId id(int i) {
    return new RecordId("caller-" + (i % 3), "POST /orders", "guard-key-" + i);
  }

  private static void write(JdbcIdempotencyStore store) {
    for (int i = 0; i < RECORDS; i++) {
      RecordId id = id(i);
      long g = ((ClaimAttempt.Claimed) store.claim(id, PRINT, "svc/1", T0, T0.plusSeconds(30),
          T0.plus(Duration.ofDays(3650)))).generation();
      // Every fifth stays in flight, never the last: a new claim rides on the next commit (issue 28),
      // and a halt right after an unanswered claim may lose it (its retry then runs at once).
      if (i % 5 != 3) {
        store.complete(id, g, "svc/1", T0, new StoredResponse(201, Map.of("Location", List.of("/orders/" + i)),
            ("{\"order\":" + i + ",\"total\":\"" + (17 * i) + ".00\"}").getBytes(StandardCharsets.UTF_8), false),
            T0.plus(Duration.ofDays(3650)));
      }
    }
  }

  @Override
  public void writeAndClose(Path dir) {
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(dir.resolve(databaseFile()))) {
      write(store);
    }
  }

  @Override
  public void writeAndHalt(Path dir) {
    write(JdbcIdempotencyStore.sqlite(dir.resolve(databaseFile())));
    Runtime.getRuntime().halt(HALT_CODE);
  }

  @Override
  public Map<String, String> read(Path dir) {
    Map<String, String> picture = new TreeMap<>();
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(dir.resolve(databaseFile()))) {
      for (int i = 0; i < RECORDS; i++) {
        Optional<StoredRecord> r;
        try {
          r = store.find(id(i));
        } catch (IdempotencyStoreException e) {
          picture.put(id(i).key(), SAID);
          continue;
        }
        picture.put(id(i).key(), r.map(GuardSubject::describe).orElse("missing"));
      }
    }
    return picture;
  }

  private static String describe(StoredRecord r) {
    return r.state() + " " + r.fingerprint().hex().substring(0, 8) + " response="
        + r.response().map(s -> s.status() + ":" + s.headers() + ":" + Arrays.hashCode(s.body())).orElse("none");
  }
}
