package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A caller identity (from the app's caller function, such as a tenant header) or a route that no
 * database keeps as given: a NUL, or an unpaired surrogate. On PostgreSQL every claim failed, so
 * the guard answered 503 on every attempt and a client retried forever; on SQLite an unpaired
 * surrogate was written as '?', so caller {@code "t\uD800"} shared the records of caller
 * {@code "t?"}, another tenant. The guard refuses such a request up front, on every store, with a
 * 400 that says not to retry, and writes nothing.
 *
 * <p>Found by a review on 2026-12-05; failed before the fix.
 */
class GuardUnstorableIdentityTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> UNSTORABLE = List.of("tenant\u0000b", "t\uD800", "t\uDC00x", "\u0000");

  private final VirtualTime time = new VirtualTime();

  @TempDir
  Path dir;

  private static GuardRequest post(String caller, String path, String key) {
    return new GuardRequest("POST", path, null, "application/json", List.of(key), caller,
        GuardRequest.BodyReader.of("{\"amount\":1}".getBytes(StandardCharsets.UTF_8)));
  }

  private IdempotencyGuard guard(IdempotencyStore store, KeyScope scope) {
    return IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null).scope(scope).build();
  }

  @Test
  void inMemory() throws Exception {
    try (InMemoryIdempotencyStore store = new InMemoryIdempotencyStore()) {
      refusesUpFrontAndMergesWithNoOtherCaller(store);
    }
  }

  @Test
  void sqlite() throws Exception {
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(dir.resolve("idem.db"))) {
      refusesUpFrontAndMergesWithNoOtherCaller(store);
    }
  }

  @Test
  @ExtendWith(PostgresExtension.class)
  void postgres(PgDatabase db) throws Exception {
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.postgres(db.dataSource())) {
      refusesUpFrontAndMergesWithNoOtherCaller(store);
    }
  }

  private void refusesUpFrontAndMergesWithNoOtherCaller(IdempotencyStore store) throws Exception {
    try (IdempotencyGuard guard = guard(store, KeyScope.CALLER_AND_ROUTE)) {
      for (String caller : UNSTORABLE) {
        for (int attempt = 0; attempt < 3; attempt++) {
          assertRefused(guard.admit(post(caller, "/transfers", "k1")), "caller " + escaped(caller));
        }
      }
      assertRefused(guard.admit(post("alice", "/transfers\u0000", "k1")), "a path with a NUL");
      assertEquals(0, store.records(RecordQuery.all(), time.now()).records().size(), "nothing was written");

      // The tenant whose name the driver would have written for "t\uD800" runs as a new operation.
      Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(post("t?", "/transfers", "k1")));
      assertEquals(1, p.claim().generation());
      guard.complete(p.claim(), CapturedResponse.json(201, "{\"id\":\"tr_1\"}"));
      assertRefused(guard.admit(post("t\uD800", "/transfers", "k1")), "after t? stored its result");
      assertEquals(1, store.records(RecordQuery.all(), time.now()).records().size());
    }
    // Where the caller is not part of the key's scope, it is not stored: nothing to refuse.
    try (IdempotencyGuard byRoute = guard(store, KeyScope.ROUTE)) {
      assertInstanceOf(Admission.Proceed.class, byRoute.admit(post("tenant\u0000b", "/transfers", "k-route")));
    }
  }

  private static void assertRefused(Admission a, String what) throws Exception {
    Admission.Respond r = assertInstanceOf(Admission.Respond.class, a, what);
    assertEquals(Admission.Reason.IDENTITY_UNSTORABLE, r.reason(), what);
    GuardResponse response = r.response();
    assertEquals(400, response.status(), what);
    assertNull(response.header("Retry-After"), what + ": the same request never succeeds, so no retry is invited");
    String body = response.bodyUtf8();
    assertEquals("urn:idem:problem:idempotency-identity-unstorable", JSON.readTree(body).get("type").asText(), what);
    assertTrue(body.chars().noneMatch(c -> c == 0 || Character.isSurrogate((char) c)), "the value is not echoed");
  }

  private static String escaped(String s) {
    StringBuilder b = new StringBuilder();
    s.chars().forEach(c -> b.append(c < 0x20 || Character.isSurrogate((char) c)
        ? String.format("\\u%04X", c) : String.valueOf((char) c)));
    return b.toString();
  }
}
