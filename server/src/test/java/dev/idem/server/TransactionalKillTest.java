package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.ChildJvm;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.server.support.AppDb;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of a server in transactional mode (issue 27), in a real child JVM, on SQLite and on
 * PostgreSQL: before the commit, after it, and in the middle of sending the response to a real
 * HTTP client. Then the retry, in this JVM, over the same database, at once (no lease to wait
 * out): exactly one effect (the app's own rows), and the retry either runs the handler once (the
 * kill came before the commit: nothing was left) or gets the stored answer (it came after).
 *
 * <p>{@code -Didem.killRounds=N} repeats each case N times with fresh keys (default 1); each case
 * prints its counts.
 */
@ExtendWith(PostgresExtension.class)
class TransactionalKillTest {
  private static final int SIGKILLED = 137;
  private static final int ROUNDS = Integer.getInteger("idem.killRounds", 1);

  @TempDir
  Path tmp;

  static GuardRequest request(String key) {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of(key), "tenant-1",
        GuardRequest.BodyReader.of("{\"item\":\"A1\"}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void sqliteKilledBeforeCommit() throws Exception {
    rounds(sqlite(), "before-commit");
  }

  @Test
  void sqliteKilledAfterCommit() throws Exception {
    rounds(sqlite(), "after-commit");
  }

  @Test
  void sqliteKilledDuringTheResponse() throws Exception {
    rounds(sqlite(), "during-response");
  }

  @Test
  void postgresKilledBeforeCommit(PgDatabase pg) throws Exception {
    rounds(postgres(pg), "before-commit");
  }

  @Test
  void postgresKilledAfterCommit(PgDatabase pg) throws Exception {
    rounds(postgres(pg), "after-commit");
  }

  @Test
  void postgresKilledDuringTheResponse(PgDatabase pg) throws Exception {
    rounds(postgres(pg), "during-response");
  }

  private List<String> sqlite() {
    return List.of("sqlite", tmp.resolve("app.db").toString());
  }

  private static List<String> postgres(PgDatabase pg) {
    return List.of("postgres", Integer.toString(pg.cluster().port()), pg.name());
  }

  private void rounds(List<String> storeArgs, String mode) throws Exception {
    AppDb db = AppDb.fromArgs(storeArgs.toArray(String[]::new), 0);
    try (JdbcIdempotencyStore store = db.openStore()) {
      db.createOrders();
    }
    int ran = 0;
    int replayed = 0;
    for (int round = 0; round < ROUNDS; round++) {
      if (killThenRetry(db, storeArgs, mode, "k-" + mode + "-" + round)) {
        replayed++;
      } else {
        ran++;
      }
    }
    System.out.printf("transactional kill test, %s %s: %d kills (SIGKILL), %d retries ran the handler once,"
        + " %d got the stored answer, 0 with two effects%n", storeArgs.get(0), mode, ROUNDS, ran, replayed);
  }

  /** One kill and its retries; true if the retry was a replay. */
  private boolean killThenRetry(AppDb db, List<String> storeArgs, String mode, String key) throws Exception {
    Path out = Files.createDirectories(tmp.resolve(key));
    String op = new RecordId("tenant-1", "POST /orders", key).operationId();
    List<String> args = new ArrayList<>(storeArgs);
    args.addAll(List.of(key, mode, out.toString()));

    ChildJvm.Result child;
    if (mode.equals("during-response")) {
      ExecutorService pool = Executors.newSingleThreadExecutor();
      try {
        Future<ChildJvm.Result> running = pool.submit(() -> ChildJvm.run(tmp, TransactionalKillChild.class,
            args.toArray(String[]::new)));
        int port = awaitPort(out.resolve("port"), running);
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest post = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
            .timeout(Duration.ofSeconds(20)).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"A1\"}")).build();
        assertThrows(IOException.class, () -> http.send(post, HttpResponse.BodyHandlers.ofString()),
            "the client saw the response cut off");
        child = running.get(60, TimeUnit.SECONDS);
      } finally {
        pool.shutdownNow();
      }
    } else {
      child = ChildJvm.run(tmp, TransactionalKillChild.class, args.toArray(String[]::new));
    }
    assertEquals(SIGKILLED, child.exitCode(), "the child was to die by SIGKILL (" + mode + "):\n" + child.output());
    assertTrue(Files.exists(out.resolve("handler")), "the handler had written its effect");
    boolean committed = !mode.equals("before-commit");
    assertEquals(committed, Files.exists(out.resolve("committed")));
    assertEquals(committed ? 1 : 0, db.orders(op), "after the kill: all or nothing");

    // The restart: a new guard over the same database, at once.
    try (JdbcIdempotencyStore store = db.openStore();
        IdempotencyGuard guard = IdempotencyGuard.builder(store).purgeInterval(null).build()) {
      RecordId id = new RecordId("tenant-1", "POST /orders", key);
      assertEquals(committed, store.find(id).isPresent(), "the record went with the effect");
      store.find(id).ifPresent(r -> assertEquals(RecordState.COMPLETED, r.state()));
      int[] runs = new int[1];
      TransactionalHandler handler = (c, claim, body) -> {
        runs[0]++;
        AppDb.insertOrder(c, claim.operationId(), "A1");
        return CapturedResponse.json(201, "{\"id\":\"" + claim.operationId() + "\"}");
      };
      GuardResponse retry = guard.inTransaction(db.dataSource(), request(key), handler);
      GuardResponse again = guard.inTransaction(db.dataSource(), request(key), handler);

      assertEquals(201, retry.status(), "served at once: no lease, no 409");
      assertEquals("{\"id\":\"" + op + "\"}", retry.bodyUtf8());
      assertEquals(committed ? 0 : 1, runs[0]);
      if (committed) {
        assertEquals("true", retry.header(IdempotencyGuard.REPLAYED_HEADER), "the stored answer");
      } else {
        assertNull(retry.header(IdempotencyGuard.REPLAYED_HEADER));
      }
      assertEquals("true", again.header(IdempotencyGuard.REPLAYED_HEADER));
      assertEquals(1, db.orders(op), "exactly one effect");
      assertFalse(store.stats(java.time.Instant.now()).inFlight() > 0, "nothing left in flight");
      return committed;
    }
  }

  private static int awaitPort(Path file, Future<ChildJvm.Result> child) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!Files.exists(file)) {
      if (child.isDone()) {
        throw new AssertionError("the child ended before it served: " + child.get().output());
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the child did not start its server in 30 s");
      }
      Thread.sleep(20); // a child process starting: nothing to wait on but its file
    }
    return Integer.parseInt(Files.readString(file).trim());
  }
}
