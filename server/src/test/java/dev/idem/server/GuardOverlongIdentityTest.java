package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A caller (a tenant header, up to the container's 8 KiB) or a route (the request's path) longer
 * than any store keeps. On PostgreSQL the record's primary key (caller, route, idem_key) is a
 * btree whose entries may not exceed 2704 bytes: every claim failed and the guard answered 503
 * with Retry-After on every attempt, forever. The guard bounds both in UTF-8 bytes
 * ({@link RecordId#MAX_CALLER_BYTES}, {@link RecordId#MAX_ROUTE_BYTES}, with the 255-byte key they
 * fit the btree) and refuses a longer one 400, on every store alike, before anything is written.
 *
 * <p>Found by a review on 2026-12-05; failed before the fix.
 */
class GuardOverlongIdentityTest {
  private static final ObjectMapper JSON = new ObjectMapper();

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
      refusesOverlongAndKeepsTheLongestAllowed(store);
    }
  }

  @Test
  void sqlite() throws Exception {
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(dir.resolve("idem.db"))) {
      refusesOverlongAndKeepsTheLongestAllowed(store);
    }
  }

  @Test
  @ExtendWith(PostgresExtension.class)
  void postgres(PgDatabase db) throws Exception {
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.postgres(db.dataSource())) {
      refusesOverlongAndKeepsTheLongestAllowed(store);
    }
  }

  private void refusesOverlongAndKeepsTheLongestAllowed(IdempotencyStore store) throws Exception {
    // Bytes, not characters: 342 euro signs are 342 characters and 1026 bytes.
    String euros = "\u20AC".repeat(342);
    String longest = "/" + "p".repeat(RecordId.MAX_ROUTE_BYTES - "POST /".length());
    String key = "k".repeat(255);
    try (IdempotencyGuard guard = guard(store, KeyScope.CALLER_AND_ROUTE)) {
      for (int attempt = 0; attempt < 3; attempt++) {
        assertRefused(guard.admit(post("t".repeat(RecordId.MAX_CALLER_BYTES + 1), "/transfers", "k1")), "long caller");
        assertRefused(guard.admit(post(euros, "/transfers", "k1")), "caller of 1026 UTF-8 bytes");
        assertRefused(guard.admit(post("alice", longest + "p", "k1")), "long route");
      }
      assertEquals(0, store.records(RecordQuery.all(), time.now()).records().size(), "nothing was written");

      // At the limits, together with the longest key, the identity fits every store's index.
      String caller = "\u20AC".repeat(RecordId.MAX_CALLER_BYTES / 3) + "t".repeat(RecordId.MAX_CALLER_BYTES % 3);
      assertEquals(RecordId.MAX_CALLER_BYTES, caller.getBytes(StandardCharsets.UTF_8).length);
      for (int run = 0; run < 2; run++) {
        Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(post(caller, longest, key)));
        assertEquals(1, p.claim().generation());
        guard.complete(p.claim(), CapturedResponse.json(201, "{\"id\":\"tr_1\"}"));
        Admission.Respond replay = assertInstanceOf(Admission.Respond.class, guard.admit(post(caller, longest, key)));
        assertEquals("true", replay.response().header(IdempotencyGuard.REPLAYED_HEADER));
        caller = caller.substring(0, caller.length() - 1) + "u"; // a second record beside the first
      }
      assertEquals(2, store.records(RecordQuery.all(), time.now()).records().size());
    }
    // Where the caller is not part of the key's scope, it is not stored: nothing to refuse.
    try (IdempotencyGuard byRoute = guard(store, KeyScope.ROUTE)) {
      assertInstanceOf(Admission.Proceed.class, byRoute.admit(post(euros, "/transfers", "k-route")));
    }
    // The stores' own check, for a caller of the SPI other than the guard.
    RecordId overlong = new RecordId(euros, "POST /transfers", "k2");
    Instant now = time.now();
    assertThrows(IllegalArgumentException.class, () -> store.claim(overlong, new Fingerprint("a".repeat(64)),
        "owner", now, now.plusSeconds(30), now.plusSeconds(60)));
    assertTrue(store.find(overlong).isEmpty());
  }

  private static void assertRefused(Admission a, String what) throws Exception {
    Admission.Respond r = assertInstanceOf(Admission.Respond.class, a, what);
    assertEquals(Admission.Reason.IDENTITY_UNSTORABLE, r.reason(), what);
    GuardResponse response = r.response();
    assertEquals(400, response.status(), what);
    assertNull(response.header("Retry-After"), what + ": the same request never succeeds, so no retry is invited");
    String body = response.bodyUtf8();
    assertEquals("urn:idem:problem:idempotency-identity-unstorable", JSON.readTree(body).get("type").asText(), what);
    assertTrue(body.length() < 1024, "the value is not echoed: " + body);
  }
}
