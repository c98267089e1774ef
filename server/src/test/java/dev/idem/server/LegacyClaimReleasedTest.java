package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.testing.VirtualTime;
import dev.idem.server.internal.RequestFingerprints;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.IdempotencyStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression tests for defects found by review in the fallback to a record's old fingerprint (one
 * stored before credential parameters were left out): an operation first run after the upgrade must
 * be stored under the request's own fingerprint, whenever the old owner releases its claim. The
 * store here is the in-memory one behind a proxy whose old owner releases its claim just before the
 * guard's second claim call, so that each race is deterministic.
 */
class LegacyClaimReleasedTest {
  private static final byte[] BODY = "{\"item\":\"book\"}".getBytes(StandardCharsets.UTF_8);
  private static final RecordId ID = new RecordId("alice", "POST /orders", "k-1");
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();
  private final AtomicInteger claims = new AtomicInteger();
  private IdempotencyGuard guard;

  @AfterEach
  void close() {
    if (guard != null) {
      guard.close();
    }
  }

  private static GuardRequest post(String rawQuery) {
    return new GuardRequest("POST", "/orders", rawQuery, "application/json", List.of("k-1"), "alice",
        GuardRequest.BodyReader.of(BODY));
  }

  /** The store, where the old owner releases its claim just before the guard's second claim call. */
  private IdempotencyStore releasedBetweenTheReadAndTheClaim() {
    return (IdempotencyStore) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {IdempotencyStore.class}, (proxy, method, args) -> {
          if (method.getName().equals("claim") && claims.incrementAndGet() == 2) {
            assertTrue(memory.release(ID, 1, "old-instance"), "the old instance's late 503 released its claim");
          }
          try {
            return method.invoke(memory, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  /**
   * Regression test for a defect found by review, described as it was; fixed: the old fingerprint is used for one claim only, of a lapsed claim seen just now; the retry that finds the record still held is answered 409 and its next retry claims under its own fingerprint.
   *
   * <p>Review finding on 9a8e9683: when the guard finds its key's record in flight under the
   * fingerprint of the query as written (a claim made before the upgrade, e.g. by an instance still
   * on the old version during a rolling deploy), {@code admit} switches the request to that old
   * fingerprint ({@code Prepared.storedAs}) for every later round, including the claim that follows
   * once the old owner has released the operation (its handler answered 503 or threw). A released
   * record can be taken over under any fingerprint, yet it is claimed, run and stored afresh under the
   * old one, which holds the access token as written.
   *
   * <p>Consequence: an operation that first runs after the upgrade is stored under a fingerprint that
   * includes the credential, so the client's next retry whose {@code access_token} was refreshed
   * meanwhile is refused 422 "key reused", the exact failure the commit fixes, although nothing
   * stored before the upgrade is being matched any more (docs/server.md promises the old
   * fingerprint only for "a record stored before this rule").
   */
  @Test
  void anOperationRunAfterTheUpgradeIsStoredWithoutTheAccessToken() throws Exception {
    guard = IdempotencyGuard.builder(releasedBetweenTheReadAndTheClaim()).clock(time.clock())
        .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();
    // The first attempt, on an instance still running the old version: claimed under the query as written.
    Fingerprint asWritten = RequestFingerprints.asWritten(post("access_token=tok-1"), BODY,
        FingerprintMode.CANONICAL_JSON);
    Instant now = time.now();
    assertInstanceOf(ClaimAttempt.Claimed.class,
        memory.claim(ID, asWritten, "old-instance", now, now.plusSeconds(30), now.plus(Duration.ofHours(24))));

    // Its retry reaches an upgraded instance while the old one still holds it (409), and the next
    // retry after the old one's handler answered 503 (released, just before that retry's claim).
    Admission.Respond busy = assertInstanceOf(Admission.Respond.class, guard.admit(post("access_token=tok-1")));
    assertEquals(Admission.Reason.IN_FLIGHT, busy.reason());
    Admission.Proceed retry = assertInstanceOf(Admission.Proceed.class, guard.admit(post("access_token=tok-1")));
    assertEquals(RequestFingerprints.of(post("access_token=tok-1"), BODY, FingerprintMode.CANONICAL_JSON),
        retry.claim().fingerprint(), "claimed afresh under the request's own fingerprint");
    guard.complete(retry.claim(), new CapturedResponse(201, Map.of(), "{\"order\":1}".getBytes(StandardCharsets.UTF_8)));

    // The client refreshed its token and retries once more (its answer was lost).
    Admission.Respond again = assertInstanceOf(Admission.Respond.class,
        guard.admit(post("access_token=tok-2-refreshed")));
    assertEquals(Admission.Reason.REPLAY, again.reason(), "an operation claimed and run after the upgrade was"
        + " stored under the old fingerprint (token included), so the retry with a refreshed token was refused as "
        + again.reason() + " " + again.response().status());
  }

  /**
   * Regression test for a defect found by review, described as it was; fixed: a claim under the old fingerprint that took over no lapsed claim is given back and made again under the request's own.
   *
   * <p>Review finding on 384e3489 ("the old fingerprint is used for one claim only, of a lapsed claim
   * seen just now").
   *
   * <p>{@code admit} reads the record (a lapsed claim stored under the query as written, credential
   * included), then makes its next store call {@code claim(id, oldFingerprint, ...)}. Nothing ties that
   * claim to the record it read: if, between the two calls, the record was released (the stalled old
   * owner's handler answered 503 or threw, or another upgraded instance took it over and released it),
   * the store's takeover of a RELEASED record accepts any fingerprint and the operation is claimed,
   * run and stored afresh under the old fingerprint, which holds the access token as written. The
   * code comment says exactly this must not happen ("one of a record released or purged meanwhile must
   * store the request's own fingerprint, or a retry with a refreshed token is refused 422").
   *
   * <p>Consequence: the operation, run after the upgrade, is stored for its whole retention under a
   * fingerprint with the token in it; the client's next retry whose {@code access_token} was refreshed
   * is refused 422 "key reused" although the effect exists. (Narrow: a race between two store calls,
   * made deterministic here by a store that releases just before the second one.)
   */
  @Test
  void aClaimReleasedBetweenTheReadAndTheOldFingerprintClaimIsStoredUnderTheRequestsOwnFingerprint() throws Exception {
    guard = IdempotencyGuard.builder(releasedBetweenTheReadAndTheClaim()).clock(time.clock())
        .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();
    Fingerprint asWritten = RequestFingerprints.asWritten(post("access_token=tok-1"), BODY,
        FingerprintMode.CANONICAL_JSON);
    Instant now = time.now();
    assertInstanceOf(ClaimAttempt.Claimed.class,
        memory.claim(ID, asWritten, "old-instance", now, now.plusSeconds(30), now.plus(Duration.ofHours(24))));
    time.advance(Duration.ofSeconds(31)); // the old instance stalls past its lease

    Admission.Proceed retry = assertInstanceOf(Admission.Proceed.class, guard.admit(post("access_token=tok-1")));
    guard.complete(retry.claim(), new CapturedResponse(201, Map.of(), "{\"order\":1}".getBytes(StandardCharsets.UTF_8)));

    Admission.Respond again = assertInstanceOf(Admission.Respond.class,
        guard.admit(post("access_token=tok-2-refreshed")));
    assertEquals(Admission.Reason.REPLAY, again.reason(), "the operation run after the upgrade was stored under"
        + " the old fingerprint (token included) because the record was released between the read and the claim"
        + " under the old fingerprint; the retry with a refreshed token was answered " + again.reason() + " "
        + again.response().status());
  }
}
