package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.testing.VirtualTime;
import dev.idem.server.internal.RequestFingerprints;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.support.AppDb;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression test for a defect found by review, described as it was; fixed: transactional mode takes a lapsed claim stored under the query as written over under its own fingerprint.
 *
 * <p>Review finding on 9a8e9683 (credential query parameters left out of the fingerprint): lease mode
 * ({@code IdempotencyGuard.admit}) takes over a lapsed claim that was stored before the upgrade,
 * under the fingerprint of the query as written, by claiming again under that fingerprint
 * ({@code Prepared.storedAs}); the transactional path ({@code TransactionalRun.guarded}) only got
 * {@code sameRequest} for its mismatch check and still claims under the new fingerprint. The store's
 * takeover of a lapsed claim requires the same fingerprint ({@code Takeover.allowed}, the JDBC
 * {@code CLAIM}'s {@code fingerprint = excluded.fingerprint}), so it is refused; the run then finds
 * the record "the same request", in flight, and answers 409.
 *
 * <p>Consequence: a keyed request with {@code ?access_token=} whose first attempt was claimed by a
 * lease-mode run before the upgrade and died (its lease lapsed) is answered 409 "in flight" on every
 * identical retry in transactional mode, until the record's retention runs out (24 h by default);
 * the operation never runs, where before this commit the identical retry took the claim over and ran.
 */
class TransactionalLegacyFingerprintTest {
  private static final byte[] BODY = "{\"item\":\"book\"}".getBytes(StandardCharsets.UTF_8);
  private final VirtualTime time = new VirtualTime();

  @TempDir
  Path dir;

  private AppDb db;
  private JdbcIdempotencyStore store;
  private IdempotencyGuard guard;

  @AfterEach
  void close() {
    if (guard != null) {
      guard.close();
    }
    if (store != null) {
      store.close();
    }
  }

  private static GuardRequest post(String rawQuery) {
    return new GuardRequest("POST", "/orders", rawQuery, "application/json", List.of("k-1"), "alice",
        GuardRequest.BodyReader.of(BODY));
  }

  @Test
  void anIdenticalRetryTakesOverALapsedClaimStoredUnderTheQueryAsWritten() throws Exception {
    db = AppDb.sqlite(dir.resolve("app.db"));
    store = db.openStore();
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler()).purgeInterval(null).build();
    // A lease-mode claim made before the upgrade, under the query as written; its process died.
    Fingerprint asWritten = RequestFingerprints.asWritten(post("access_token=tok"), BODY,
        FingerprintMode.CANONICAL_JSON);
    RecordId id = new RecordId("alice", "POST /orders", "k-1");
    Instant now = time.now();
    assertInstanceOf(ClaimAttempt.Claimed.class,
        store.claim(id, asWritten, "crashed-before-upgrade", now, now.plusSeconds(1), now.plus(Duration.ofHours(24))));
    time.advance(Duration.ofSeconds(2));

    AtomicInteger runs = new AtomicInteger();
    GuardResponse answer = guard.inTransaction(db.dataSource(), post("access_token=tok"), (c, claim, body) -> {
      runs.incrementAndGet();
      return CapturedResponse.json(201, "{\"order\":1}");
    });

    assertEquals(201, answer.status(), "the identical retry of a lapsed pre-upgrade claim, in transactional mode, was"
        + " answered " + answer.status() + " (" + new String(answer.body(), StandardCharsets.UTF_8)
        + "): the claim was not taken over, though lease mode takes it over");
    assertEquals(1, runs.get());
  }
}
