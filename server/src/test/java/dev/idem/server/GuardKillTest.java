package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.jdbc.support.ChildJvm;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of the server mid-handler, on each durable store: a real child JVM claims an operation,
 * starts its handler and SIGKILLs itself. Then, in this JVM, over the same database: a retry
 * within the dead claim's lease gets 409; once the lease has expired (an offset clock, no waiting)
 * the retry runs the handler exactly once and stores it; later retries get the replay; and the
 * dead handler's fencing token can no longer complete anything.
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
  void sqlite() throws Exception {
    Path db = tmp.resolve("idem.db");
    killThenRecover(() -> JdbcIdempotencyStore.sqlite(db), "sqlite", db.toString());
  }

  @Test
  void postgres(PgDatabase pg) throws Exception {
    killThenRecover(() -> JdbcIdempotencyStore.postgres(pg.dataSource()), "postgres",
        Integer.toString(pg.cluster().port()), pg.name());
  }

  private void killThenRecover(Supplier<IdempotencyStore> open, String... storeArgs) throws Exception {
    String key = "kill-" + storeArgs[0];
    Path effects = tmp.resolve("effects.log");
    String[] args = new String[storeArgs.length + 2];
    System.arraycopy(storeArgs, 0, args, 0, storeArgs.length);
    args[storeArgs.length] = key;
    args[storeArgs.length + 1] = effects.toString();

    ChildJvm.Result child = ChildJvm.run(tmp, KillChild.class, args);

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
      assertEquals(RecordState.IN_FLIGHT, store.find(id).orElseThrow().state(), "the dead claim survived the kill");

      try (IdempotencyGuard now = guard(store, Clock.systemUTC())) {
        Admission early = now.admit(request(key));
        assertEquals(Admission.Reason.IN_FLIGHT, assertInstanceOf(Admission.Respond.class, early).reason(),
            "within the dead claim's 30 s lease, a retry waits");
      }
      // The lease has expired: the same retry, 31 s later, on a clock offset instead of a wait.
      try (IdempotencyGuard later = guard(store, Clock.offset(Clock.systemUTC(), Duration.ofSeconds(31)))) {
        for (int attempt = 0; attempt < 3; attempt++) {
          Admission a = later.admit(request(key));
          if (a instanceof Admission.Proceed p) {
            runs[0]++;
            assertEquals(deadGeneration + 1, p.claim().generation(), "a takeover, fenced by a new generation");
            assertEquals(CompletionResult.STORED, later.complete(p.claim(),
                new CapturedResponse(201, Map.of("Content-Type", List.of("application/json")),
                    "{\"order\":1}".getBytes(StandardCharsets.UTF_8))));
          } else {
            assertEquals(Admission.Reason.REPLAY, assertInstanceOf(Admission.Respond.class, a).reason());
            assertEquals("{\"order\":1}", ((Admission.Respond) a).response().bodyUtf8());
          }
        }
        assertEquals(1, runs[0], "the retry after lease expiry ran the handler exactly once");

        // The dead handler "wakes up" with its fencing token: nothing it does counts.
        java.time.Instant t = Clock.offset(Clock.systemUTC(), Duration.ofSeconds(32)).instant();
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

  private static IdempotencyGuard guard(IdempotencyStore store, Clock clock) {
    return IdempotencyGuard.builder(store).clock(clock).purgeInterval(null).build();
  }
}
