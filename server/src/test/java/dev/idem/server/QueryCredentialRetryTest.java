package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.testing.VirtualTime;
import dev.idem.server.internal.RequestFingerprints;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review: a credential in the query stayed in the guard's
 * fingerprint. A client that authenticates with {@code ?access_token=} (RFC 6750 section 2.3) and
 * refreshes its token between a timed-out attempt and its retry sends the same operation under the
 * same key, and was refused 422 "key reused with a different request", which Idem's client (and
 * the IETF draft) takes as a permanent failure although the first attempt's effect exists. The same
 * for the token in a form-encoded body (RFC 6750 section 2.2; found by the second review). Also:
 * a record stored before the rule (its fingerprint over the query as written) is still the same
 * request's, and a business parameter still tells operations apart.
 */
class QueryCredentialRetryTest {
  private static final byte[] BODY = "{\"item\":\"book\"}".getBytes(StandardCharsets.UTF_8);
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock())
      .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest post(String rawQuery) {
    return new GuardRequest("POST", "/orders", rawQuery, "application/json", List.of("k-1"), "alice",
        GuardRequest.BodyReader.of(BODY));
  }

  private static CapturedResponse created() {
    return new CapturedResponse(201, Map.of(), "{\"order\":1}".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aRetryWhoseAccessTokenWasRefreshedIsTheSameOperation() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class,
        guard.admit(post("dry_run=false&access_token=tok-before")));
    guard.complete(first.claim(), created());

    Admission retry = guard.admit(post("dry_run=false&ACCESS_TOKEN=tok-after-refresh"));

    Admission.Respond answer = assertInstanceOf(Admission.Respond.class, retry);
    assertEquals(Admission.Reason.REPLAY, answer.reason(),
        "the same order under the same key, only its credential refreshed, was refused as "
            + answer.reason() + " " + answer.response().status());
    assertEquals("{\"order\":1}", new String(answer.response().body(), StandardCharsets.UTF_8));
  }

  private static GuardRequest form(String body) {
    return new GuardRequest("POST", "/orders", null, "application/x-www-form-urlencoded; charset=UTF-8",
        List.of("k-1"), "alice", GuardRequest.BodyReader.of(body.getBytes(StandardCharsets.UTF_8)));
  }

  /** RFC 6750 section 2.2: the bearer token in a form-encoded body, refreshed between two attempts. */
  @Test
  void aFormRetryWhoseAccessTokenWasRefreshedIsTheSameOperationAndItsItemsStillCount() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class,
        guard.admit(form("item=book&access_token=tok-before&qty=2")));
    guard.complete(first.claim(), created());

    Admission.Respond retry = assertInstanceOf(Admission.Respond.class,
        guard.admit(form("item=book&access_token=tok-after-refresh&qty=2")));
    Admission.Respond other = assertInstanceOf(Admission.Respond.class,
        guard.admit(form("item=book&access_token=tok-after-refresh&qty=3")));

    assertEquals(Admission.Reason.REPLAY, retry.reason());
    assertEquals(Admission.Reason.KEY_REUSED, other.reason(), "another quantity is another operation");
  }

  @Test
  void aKeyReusedWithAnotherBusinessParameterIsStillRefused() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class,
        guard.admit(post("dry_run=false&access_token=tok")));
    guard.complete(first.claim(), created());

    Admission.Respond answer = assertInstanceOf(Admission.Respond.class,
        guard.admit(post("dry_run=true&access_token=tok")));

    assertEquals(Admission.Reason.KEY_REUSED, answer.reason());
  }

  @Test
  void aRecordStoredUnderTheQueryAsWrittenIsReplayedToTheSameRequest() throws Exception {
    GuardRequest request = post("access_token=tok");
    Fingerprint asWritten = RequestFingerprints.asWritten(request, BODY, FingerprintMode.CANONICAL_JSON);
    RecordId id = new RecordId("alice", "POST /orders", "k-1");
    Instant now = time.now();
    ClaimAttempt.Claimed c = assertInstanceOf(ClaimAttempt.Claimed.class,
        store.claim(id, asWritten, "before-upgrade", now, now.plusSeconds(30), now.plus(Duration.ofHours(24))));
    assertTrue(store.complete(id, c.generation(), "before-upgrade", now,
        new StoredResponse(201, Map.of(), "{\"order\":7}".getBytes(StandardCharsets.UTF_8), false),
        now.plus(Duration.ofHours(24))));

    Admission.Respond answer = assertInstanceOf(Admission.Respond.class, guard.admit(post("access_token=tok")));

    assertEquals(Admission.Reason.REPLAY, answer.reason(), "an identical retry after the upgrade");
    assertEquals("{\"order\":7}", new String(answer.response().body(), StandardCharsets.UTF_8));
  }

  @Test
  void aLapsedClaimStoredUnderTheQueryAsWrittenIsTakenOverByTheSameRequest() throws Exception {
    GuardRequest request = post("access_token=tok");
    Fingerprint asWritten = RequestFingerprints.asWritten(request, BODY, FingerprintMode.CANONICAL_JSON);
    RecordId id = new RecordId("alice", "POST /orders", "k-1");
    Instant now = time.now();
    assertInstanceOf(ClaimAttempt.Claimed.class,
        store.claim(id, asWritten, "crashed-before-upgrade", now, now.plusSeconds(1), now.plus(Duration.ofHours(24))));
    time.advance(Duration.ofSeconds(2));

    Admission.Proceed retry = assertInstanceOf(Admission.Proceed.class, guard.admit(post("access_token=tok")));

    assertEquals(asWritten, retry.claim().fingerprint(), "the record keeps the fingerprint it was stored with");
    guard.complete(retry.claim(), created());
    Admission.Respond again = assertInstanceOf(Admission.Respond.class, guard.admit(post("access_token=tok")));
    assertEquals(Admission.Reason.REPLAY, again.reason());
    assertEquals("{\"order\":1}", new String(again.response().body(), StandardCharsets.UTF_8));
  }
}
