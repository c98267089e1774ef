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
class LegacyClaimReleasedMidAdmitTest {
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

  /** The store, where the stalled old owner releases its lapsed claim just before the guard's second claim call. */
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
