package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.ChildJvm;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.spi.StoredRecord;
import dev.idem.server.spi.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of the server mid-handler, on each durable store: a real child JVM claims an operation,
 * starts its handler and SIGKILLs itself. Then, in this JVM, over the same database, the restart:
 *
 * <ul>
 *   <li>SQLite (one process per store): the store, opening, knows the claim's holder is dead, so
 *       the first retry runs at once. Issue 27: it answered 409 for the rest of the 30 s lease, long
 *       after a client such as stripe-node had stopped retrying.</li>
 *   <li>PostgreSQL, a named instance restarting under its name: the same, at the guard's start.</li>
 *   <li>PostgreSQL, unnamed (or another instance): a fleet cannot tell a dead holder from a slow
 *       one, so a retry within the lease gets 409, and once it has expired (an offset clock, no
 *       waiting) the retry takes over.</li>
 * </ul>
 *
 * <p>In every case the retry runs the handler exactly once and stores it, later retries get the
 * replay, and the dead handler's fencing token can no longer complete anything.
 */
@ExtendWith(PostgresExtension.class)
class GuardKillTest {
  private static final int SIGKILLED = 137;

  @TempDir
  Path tmp;

  static GuardRequest request(String key) {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of(key), "tenant-1",
        GuardRequest.BodyReader.of("{\"sku\":\"A1\",\"qty\":2}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void sqliteRestartServesTheRetryAtOnce() throws Exception {
    Path db = tmp.resolve("idem.db");
    killThenRecover(() -> JdbcIdempotencyStore.sqlite(db), b -> {}, true, List.of("sqlite", db.toString()), null);
  }

  @Test
  void postgresNamedInstanceReclaimsItsOwnClaimsAtStart(PgDatabase pg) throws Exception {
    killThenRecover(() -> JdbcIdempotencyStore.postgres(pg.dataSource()), b -> b.instanceId("orders-0"), true,
        List.of("postgres", Integer.toString(pg.cluster().port()), pg.name()), "orders-0");
  }

  @Test
  void postgresAnotherInstanceWaitsOutTheLease(PgDatabase pg) throws Exception {
    killThenRecover(() -> JdbcIdempotencyStore.postgres(pg.dataSource()), b -> b.instanceId("orders-1"), false,
        List.of("postgres", Integer.toString(pg.cluster().port()), pg.name()), "orders-0");
  }

  @Test
  void postgresUnnamedWaitsOutTheLease(PgDatabase pg) throws Exception {
    killThenRecover(() -> JdbcIdempotencyStore.postgres(pg.dataSource()), b -> {}, false,
        List.of("postgres", Integer.toString(pg.cluster().port()), pg.name()), null);
  }

  private void killThenRecover(Supplier<IdempotencyStore> open, Consumer<IdempotencyGuard.Builder> restart,
      boolean servedAtOnce, List<String> storeArgs, String childInstance) throws Exception {
    String key = "kill-" + storeArgs.get(0);
    Path effects = tmp.resolve("effects.log");
    List<String> args = new ArrayList<>(storeArgs);
    args.addAll(Arrays.asList(key, effects.toString()));
    if (childInstance != null) {
      args.add(childInstance);
    }

    ChildJvm.Result child = ChildJvm.run(tmp, KillChild.class, args.toArray(String[]::new));

    assertEquals(SIGKILLED, child.exitCode(), "the child was to die by SIGKILL mid-handler:\n" + child.output());
    List<String> started = Files.readAllLines(effects);
    assertEquals(1, started.size(), "the dead handler had started its effect");
    String[] dead = started.get(0).split(" ");
    long deadGeneration = Long.parseLong(dead[1]);
    String deadOwner = dead[2];
    assertEquals(1, deadGeneration);

    int[] runs = new int[1];
    try (IdempotencyStore store = open.get()) {
      RecordId id = new RecordId("tenant-1", "POST /orders", key);
      // The embedded store's new claim rides on the next commit (issue 28), which the kill may have
      // prevented: gone, or in flight with its lease ended at open, the retry runs at once alike.
      java.util.Optional<dev.idem.server.spi.StoredRecord> survived = store.find(id);
      if (!storeArgs.get(0).equals("sqlite") || survived.isPresent()) {
        assertEquals(RecordState.IN_FLIGHT, survived.orElseThrow().state(), "the dead claim survived the kill");
      }
      long fencedAbove = survived.isPresent() ? deadGeneration : 0;

      // The restart, at once: the same wall clock as the kill, well within the dead claim's 30 s lease.
      IdempotencyGuard.Builder now = IdempotencyGuard.builder(store).clock(Clock.systemUTC()).purgeInterval(null);
      restart.accept(now);
      Clock retryClock;
      try (IdempotencyGuard guard = now.build()) {
        Admission first = guard.admit(request(key));
        if (servedAtOnce) {
          Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, first,
              "the dead claim's holder is known dead: no 409");
          assertTrue(p.claim().generation() > fencedAbove, "a takeover, fenced by a new generation");
          runs[0]++;
          assertEquals(CompletionResult.STORED, guard.complete(p.claim(), created()));
          retryClock = Clock.systemUTC();
        } else {
          assertEquals(Admission.Reason.IN_FLIGHT, assertInstanceOf(Admission.Respond.class, first).reason(),
              "within the dead claim's 30 s lease, a retry waits");
          // The lease has expired: the same retry, 31 s later, on a clock offset instead of a wait.
          retryClock = Clock.offset(Clock.systemUTC(), Duration.ofSeconds(31));
        }
      }
      try (IdempotencyGuard later = IdempotencyGuard.builder(store).clock(retryClock).purgeInterval(null).build()) {
        for (int attempt = 0; attempt < 3; attempt++) {
          Admission a = later.admit(request(key));
          if (a instanceof Admission.Proceed p) {
            runs[0]++;
            assertTrue(p.claim().generation() > fencedAbove, "a takeover, fenced by a new generation");
            assertEquals(CompletionResult.STORED, later.complete(p.claim(), created()));
          } else {
            assertEquals(Admission.Reason.REPLAY, assertInstanceOf(Admission.Respond.class, a).reason());
            assertEquals("{\"order\":1}", ((Admission.Respond) a).response().bodyUtf8());
          }
        }
        assertEquals(1, runs[0], "the retry ran the handler exactly once");

        // The dead handler "wakes up" with its fencing token: nothing it does counts.
        Instant t = retryClock.instant().plusSeconds(1);
        assertFalse(store.complete(id, deadGeneration, deadOwner, t,
            new StoredResponse(201, Map.of(), "stale".getBytes(StandardCharsets.UTF_8), false), t.plusSeconds(60)));
        assertFalse(store.renew(id, deadGeneration, deadOwner, t, t.plusSeconds(30)));
        assertFalse(store.release(id, deadGeneration, deadOwner));
        StoredRecord r = store.find(id).orElseThrow();
        assertEquals(RecordState.COMPLETED, r.state());
        assertEquals("{\"order\":1}", new String(r.response().orElseThrow().body(), StandardCharsets.UTF_8));
      }
    }
    assertEquals(1, Files.readAllLines(effects).size(), "the child's effect, once; and the retry's, once");
  }

  private static CapturedResponse created() {
    return new CapturedResponse(201, Map.of("Content-Type", List.of("application/json")),
        "{\"order\":1}".getBytes(StandardCharsets.UTF_8));
  }
}
