package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.spi.StoredResponse;
import dev.idem.core.testing.VirtualTime;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The guard's protocol, driven directly (no HTTP): each test counts how often the "handler" ran,
 * through {@link #send}, which plays an adapter.
 */
class IdempotencyGuardTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private final AtomicInteger effects = new AtomicInteger();
  private IdempotencyGuard guard = guard(b -> {});

  private IdempotencyGuard guard(Consumer<IdempotencyGuard.Builder> settings) {
    IdempotencyGuard.Builder b = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler()).storeExecutor(Runnable::run)
        .purgeInterval(null);
    settings.accept(b);
    return b.build();
  }

  @AfterEach
  void close() {
    guard.close();
  }

  static GuardRequest post(String path, String key, String caller, String contentType, byte[] body) {
    return new GuardRequest("POST", path, null, contentType, key == null ? List.of() : List.of(key), caller,
        GuardRequest.BodyReader.of(body));
  }

  static GuardRequest json(String key, String json) {
    return post("/orders", key, "alice", "application/json", json.getBytes(StandardCharsets.UTF_8));
  }

  /** Admits, and on Proceed "runs the handler" (one effect) and completes with its reply. */
  GuardResponse send(GuardRequest r, int status, Map<String, List<String>> headers, String body) throws Exception {
    Admission a = guard.admit(r);
    if (a instanceof Admission.Respond respond) {
      return respond.response();
    }
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, a);
    int n = effects.incrementAndGet();
    byte[] bytes = (body + n).getBytes(StandardCharsets.UTF_8);
    CompletionResult result = guard.complete(p.claim(), new CapturedResponse(status, headers, bytes));
    assertEquals(status < 500 ? CompletionResult.STORED : CompletionResult.RELEASED, result);
    return new GuardResponse(status, headers, bytes);
  }

  GuardResponse send(GuardRequest r) throws Exception {
    return send(r, 201, Map.of("Content-Type", List.of("application/json")), "order-");
  }

  @Test
  void repeatGetsTheStoredResultMarkedAsReplayWithoutANewEffect() throws Exception {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Content-Type", List.of("application/json"));
    headers.put("Location", List.of("/orders/1"));
    headers.put("Set-Cookie", List.of("session=secret"));
    headers.put("X-Trace", List.of("t1"));
    GuardResponse first = send(json("k1", "{\"sku\":\"A1\"}"), 201, headers, "order-");
    GuardResponse again = send(json("k1", "{ \"sku\" : \"A1\" }"));

    assertEquals(1, effects.get());
    assertEquals(201, again.status());
    assertArrayEquals(first.body(), again.body());
    assertEquals("true", again.header(IdempotencyGuard.REPLAYED_HEADER));
    assertEquals("/orders/1", again.header("Location"));
    assertEquals("application/json", again.header("Content-Type"));
    assertNull(again.header("Set-Cookie"), "a secret header never reaches the store");
    assertNull(again.header("X-Trace"), "only allowlisted headers are replayed");
    StoredResponse stored = store.find(new RecordId("alice", "POST /orders", "k1")).orElseThrow().response().orElseThrow();
    assertFalse(stored.headers().containsKey("Set-Cookie"));
  }

  /** The guard keeps secrets out of its store by the client's rule, not by four names of its own. */
  @Test
  void aSecretLookingHeaderIsNeverStoredEvenIfAllowlisted() throws Exception {
    guard.close();
    guard = guard(b -> b.replayHeaders(java.util.Set.of("Location", "X-Auth-Token", "X-Session-Id")));
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Location", List.of("/orders/1"));
    headers.put("X-Auth-Token", List.of("secret-1"));
    headers.put("X-Session-Id", List.of("secret-2"));
    send(json("k1", "{}"), 201, headers, "order-");
    GuardResponse again = send(json("k1", "{}"));
    assertEquals("/orders/1", again.header("Location"));
    assertNull(again.header("X-Auth-Token"));
    assertNull(again.header("X-Session-Id"));
    StoredResponse stored = store.find(new RecordId("alice", "POST /orders", "k1")).orElseThrow().response().orElseThrow();
    assertEquals(java.util.Set.of("location"), lowerCase(stored.headers().keySet()));
  }

  /**
   * A Location or Content-Location may carry a credential in its URL: a presigned download URL's
   * signature, a servlet container's ;jsessionid= from encodeRedirectURL, user info. The first
   * answer carries it as the handler made it; the store, and so every replay, has its values
   * redacted by the client's rule for stored URLs (review rguard: stored in clear).
   */
  @Test
  void aCredentialInAStoredLocationIsRedactedAndTheRestKept() throws Exception {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Location", List.of("https://files.example/o/1.pdf?X-Amz-Signature=planted-sig-1&X-Amz-Expires=300"));
    headers.put("Content-Location", List.of("/orders/1;jsessionid=planted-session-2"));
    GuardResponse first = send(json("k1", "{}"), 201, headers, "order-");
    GuardResponse again = send(json("k1", "{}"));
    assertEquals(1, effects.get());
    assertTrue(first.header("Location").contains("planted-sig-1"), "the live answer is the handler's own");
    StoredResponse stored = store.find(new RecordId("alice", "POST /orders", "k1")).orElseThrow().response().orElseThrow();
    assertFalse(stored.headers().toString().contains("planted"), "stored in clear: " + stored.headers());
    assertEquals("https://files.example/o/1.pdf?X-Amz-Signature=redacted&X-Amz-Expires=300", again.header("Location"));
    assertEquals("/orders/1;jsessionid=redacted", again.header("Content-Location"));
  }

  /**
   * A Link or Refresh the app allowlists carries URLs as Location does (a next-page link with a
   * token, a pre-signed download link): the store, and so every replay, has them redacted.
   */
  @Test
  void theUrlsOfAnAllowlistedLinkAndRefreshAreRedactedInTheStore() throws Exception {
    guard = guard(b -> b.replayHeaders(java.util.Set.of("Link", "Refresh")));
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Link", List.of("</orders?page=2&access_token=planted-next>; rel=\"next\"",
        "<https://files.example/o/1.pdf?X-Amz-Signature=planted-sig>; rel=\"enclosure\""));
    headers.put("Refresh", List.of("0; url=/orders/1;jsessionid=planted-session"));
    GuardResponse first = send(json("k1", "{}"), 201, headers, "order-");
    GuardResponse again = send(json("k1", "{}"));
    assertEquals(1, effects.get());
    assertTrue(first.header("Refresh").contains("planted-session"), "the live answer is the handler's own");
    StoredResponse stored = store.find(new RecordId("alice", "POST /orders", "k1")).orElseThrow().response().orElseThrow();
    assertFalse(stored.headers().toString().contains("planted"), "stored in clear: " + stored.headers());
    assertEquals("0; url=/orders/1;jsessionid=redacted", again.header("Refresh"));
    assertTrue(again.headers().toString().contains("</orders?page=2&access_token=redacted>; rel=\"next\""),
        again.headers().toString());
  }

  private static java.util.Set<String> lowerCase(java.util.Set<String> names) {
    return names.stream().map(n -> n.toLowerCase(java.util.Locale.ROOT)).collect(java.util.stream.Collectors.toSet());
  }

  @Test
  void keyReusedWithAnotherPayloadIs422AndRunsNothing() throws Exception {
    send(json("k1", "{\"sku\":\"A1\"}"));
    GuardResponse reused = send(json("k1", "{\"sku\":\"B2\"}"));
    assertEquals(422, reused.status());
    assertTrue(reused.bodyUtf8().contains("reused"), reused.bodyUtf8());
    assertEquals("application/problem+json", reused.header("Content-Type"));
    assertEquals(1, effects.get());
  }

  @Test
  void nonJsonBodiesAreFingerprintedByTheirRawBytes() throws Exception {
    GuardRequest text = post("/orders", "k-text", "alice", "text/plain", "a=1&b=2".getBytes(StandardCharsets.UTF_8));
    GuardRequest reordered = post("/orders", "k-text", "alice", "text/plain", "b=2&a=1".getBytes(StandardCharsets.UTF_8));
    GuardRequest brokenJson = post("/orders", "k-bad", "alice", "application/json", "{not json".getBytes(StandardCharsets.UTF_8));
    byte[] binary = {0, (byte) 0xff, (byte) 0xfe, 10, 13};
    GuardRequest bin = post("/orders", "k-bin", "alice", "application/octet-stream", binary);

    send(text);
    assertEquals(422, send(reordered).status(), "other bytes, another payload");
    assertEquals("true", send(text).header(IdempotencyGuard.REPLAYED_HEADER));
    send(brokenJson);
    assertEquals("true", send(brokenJson).header(IdempotencyGuard.REPLAYED_HEADER), "JSON that does not parse: raw bytes");
    send(bin);
    assertEquals("true", send(bin).header(IdempotencyGuard.REPLAYED_HEADER));
    assertEquals(3, effects.get());
  }

  @Test
  void missingKeyIs400WhereRequiredAndUnguardedElsewhere() throws Exception {
    GuardResponse missing = send(json(null, "{}"));
    assertEquals(400, missing.status());
    assertTrue(missing.bodyUtf8().contains("Idempotency-Key is missing"), missing.bodyUtf8());
    GuardRequest get = new GuardRequest("GET", "/orders", null, null, List.of(), null, limit -> {
      throw new AssertionError("an unguarded request's body is left to the handler");
    });
    assertInstanceOf(Admission.Unguarded.class, guard.admit(get));
    assertEquals(0, effects.get());
  }

  @Test
  void malformedKeysAre400AndClaimNothing() throws Exception {
    for (String bad : List.of("", "   ", "\"\"", "\"open", "\"a\\x\"", "\"a\"b\"", "clé", "tab\there",
        "x".repeat(256), "\"" + "y".repeat(256) + "\"")) {
      GuardResponse r = send(json(bad, "{}"));
      assertEquals(400, r.status(), bad);
      assertTrue(r.bodyUtf8().contains("malformed"), r.bodyUtf8());
    }
    GuardRequest twice = new GuardRequest("POST", "/orders", null, null, List.of("a", "b"), null,
        GuardRequest.BodyReader.of(new byte[0]));
    assertEquals(Admission.Reason.KEY_MALFORMED, assertInstanceOf(Admission.Respond.class, guard.admit(twice)).reason());
    assertEquals(0, effects.get());
    assertEquals(0, store.size());
    assertEquals(201, send(json("x".repeat(255), "{}")).status(), "255 characters is the limit, not over it");
    assertEquals("true", send(json("\"" + "x".repeat(255) + "\"", "{}")).header(IdempotencyGuard.REPLAYED_HEADER),
        "quoted and bare spell one key");
  }

  @Test
  void hugeBodiesAre413AndNeverReadPastTheCap() throws Exception {
    guard = guard(b -> b.maxRequestBody(1024));
    int[] asked = new int[1];
    GuardRequest huge = new GuardRequest("POST", "/orders", null, "application/json", List.of("k-huge"), null,
        limit -> {
          asked[0] = limit;
          return new byte[limit]; // a reader stops at the limit: the rest is never read
        });
    GuardResponse r = assertInstanceOf(Admission.Respond.class, guard.admit(huge)).response();
    assertEquals(413, r.status());
    assertEquals(1025, asked[0]);
    assertEquals(0, store.size(), "nothing claimed");
    assertEquals(201, send(post("/orders", "k-huge", null, "application/json", new byte[1024])).status());
  }

  @Test
  void repeatWhileInFlightIs409WithRetryAfterAndMismatchWinsOverInFlight() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(json("k1", "{\"a\":1}")));
    GuardResponse dup = send(json("k1", "{\"a\":1}"));
    assertEquals(409, dup.status());
    assertEquals("1", dup.header("Retry-After"));
    assertTrue(dup.bodyUtf8().contains("still being processed"));
    assertEquals(422, send(json("k1", "{\"a\":2}")).status());
    guard.complete(first.claim(), new CapturedResponse(201, Map.of(), "done".getBytes(StandardCharsets.UTF_8)));
    assertEquals("done", send(json("k1", "{\"a\":1}")).bodyUtf8());
    assertEquals(0, effects.get(), "only the first request, driven by hand here, ran");
  }

  @Test
  void serverErrorsAndThrownHandlersReleaseTheClaimSoARetryRunsAgain() throws Exception {
    GuardResponse failed = send(json("k5", "{}"), 503, Map.of(), "busy-");
    assertEquals(503, failed.status());
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(json("k5", "{}")));
    assertEquals(2, p.claim().generation());
    guard.abandon(p.claim()); // the handler threw
    GuardResponse ok = send(json("k5", "{}"));
    assertEquals(201, ok.status());
    assertNull(ok.header(IdempotencyGuard.REPLAYED_HEADER));
    assertEquals(2, effects.get(), "the 5xx run and the successful one; the thrown one was driven by hand");
    assertEquals(3, store.find(new RecordId("alice", "POST /orders", "k5")).orElseThrow().generation());
  }

  @Test
  void fourHundredsAreStoredAndReplayed() throws Exception {
    send(json("k402", "{}"), 402, Map.of("Content-Type", List.of("application/json")), "declined-");
    GuardResponse again = send(json("k402", "{}"));
    assertEquals(402, again.status());
    assertEquals("declined-1", again.bodyUtf8());
    assertEquals(1, effects.get());
  }

  @Test
  void theLeaseIsRenewedWhileTheHandlerRunsSoALongHandlerKeepsItsClaim() throws Exception {
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(json("k-long", "{}")));
    time.advance(Duration.ofMinutes(5)); // renewals every 10 s run on the way
    assertFalse(p.claim().leaseLost());
    assertEquals(409, send(json("k-long", "{}")).status(), "still in flight, not taken over");
    assertEquals(CompletionResult.STORED, guard.complete(p.claim(), new CapturedResponse(201, Map.of(), new byte[0])));
    assertEquals(0, time.pendingTasks(), "completion stops the renewals");
  }

  @Test
  void aStaleHandlerThatWakesAfterATakeoverCannotComplete() throws Exception {
    Admission.Proceed stale = assertInstanceOf(Admission.Proceed.class, guard.admit(json("k-stale", "{}")));
    time.jump(Duration.ofSeconds(31)); // the JVM paused: no renewal ran
    GuardResponse retry = send(json("k-stale", "{}")); // the client's retry takes the claim over
    assertEquals(201, retry.status());
    assertEquals(1, effects.get());

    CompletionResult late = guard.complete(stale.claim(), new CapturedResponse(201, Map.of(), "stale".getBytes()));

    assertEquals(CompletionResult.REFUSED, late);
    assertEquals(409, guard.refusedResponse().status());
    GuardResponse replay = send(json("k-stale", "{}"));
    assertEquals("order-1", replay.bodyUtf8(), "the new owner's result stands");
  }

  @Test
  void aHandlerWhoseLeaseRanOutWithNobodyTakingItOverStillStoresItsResult() throws Exception {
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(json("k-exp", "{}")));
    time.jump(Duration.ofSeconds(31));
    time.advance(Duration.ZERO); // the overdue renewal runs: nobody took the claim, so it is renewed
    assertFalse(p.claim().leaseLost());
    assertEquals(CompletionResult.STORED, guard.complete(p.claim(), new CapturedResponse(201, Map.of(), new byte[0])));
    assertEquals("true", send(json("k-exp", "{}")).header(IdempotencyGuard.REPLAYED_HEADER));
  }

  @Test
  void aHandlerWhoseClaimWasTakenOverCannotStore() throws Exception {
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(json("k-exp", "{}")));
    time.jump(Duration.ofSeconds(31));
    assertInstanceOf(Admission.Proceed.class, guard.admit(json("k-exp", "{}")), "taken over");
    time.advance(Duration.ZERO); // the overdue renewal runs, and finds the claim gone
    assertTrue(p.claim().leaseLost());
    assertEquals(CompletionResult.REFUSED, guard.complete(p.claim(), new CapturedResponse(201, Map.of(), new byte[0])));
  }

  @Test
  void afterRetentionTheKeyIsNewAgainAndRoutesCanKeepLonger() throws Exception {
    guard = guard(b -> b.route("POST", "/payments", new RoutePolicy(true, Duration.ofDays(7))));
    send(json("k-r", "{}"));
    send(post("/payments", "k-r", "alice", "application/json", "{}".getBytes()));
    time.advance(Duration.ofHours(24).plusSeconds(1));

    assertNull(send(json("k-r", "{}")).header(IdempotencyGuard.REPLAYED_HEADER), "past 24 h the key is new");
    assertEquals("true", send(post("/payments", "k-r", "alice", "application/json", "{}".getBytes()))
        .header(IdempotencyGuard.REPLAYED_HEADER), "the route keeps 7 days");
    assertEquals(3, effects.get());
    time.advance(Duration.ofDays(7));
    assertEquals(2, guard.purgeExpired());
  }

  @Test
  void theGuardPurgesOnItsOwnAtTheInterval() throws Exception {
    guard = guard(b -> b.purgeInterval(Duration.ofMinutes(10)).retention(Duration.ofMinutes(5)));
    send(json("k-p", "{}"));
    assertEquals(1, store.size());
    time.advance(Duration.ofMinutes(10));
    assertEquals(0, store.size());
    assertTrue(guard.lastPurgeFailure().isEmpty());
  }

  @Test
  void aKeyReusedAcrossRoutesAndCallersIsIsolatedByScope() throws Exception {
    send(post("/orders", "shared", "alice", null, new byte[0]));
    send(post("/orders", "shared", "bob", null, new byte[0]));
    send(post("/refunds", "shared", "alice", "text/plain", "other".getBytes()));
    assertEquals(3, effects.get(), "caller and route both scope the key");

    guard = guard(b -> b.scope(KeyScope.CALLER));
    assertEquals(201, send(post("/refunds", "k-c", "alice", null, new byte[0])).status());
    assertEquals(422, send(post("/orders", "k-c", "alice", null, new byte[0])).status(),
        "per caller: another route with the same key is the same operation, with a different request");
    guard = guard(b -> b.scope(KeyScope.ROUTE));
    send(post("/orders", "k-r", "alice", null, new byte[0]));
    assertEquals("true", send(post("/orders", "k-r", "bob", null, new byte[0])).header(IdempotencyGuard.REPLAYED_HEADER),
        "per route: callers share the key");
  }

  @Test
  void anOverCapResponseIsDoneButItsReplayHasNoBody() throws Exception {
    guard = guard(b -> b.maxCapturedBody(16));
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(json("k-big", "{}")));
    Map<String, List<String>> h = Map.of("Content-Type", List.of("application/json"), "Location", List.of("/orders/9"));
    assertEquals(CompletionResult.STORED, guard.complete(p.claim(), new CapturedResponse(201, h, null)));

    GuardResponse replay = assertInstanceOf(Admission.Respond.class, guard.admit(json("k-big", "{}"))).response();
    assertEquals(201, replay.status());
    assertEquals(0, replay.body().length);
    assertEquals("omitted", replay.header(IdempotencyGuard.REPLAY_BODY_HEADER));
    assertEquals("/orders/9", replay.header("Location"));
    assertNull(replay.header("Content-Type"), "no body, so no media type");
    assertEquals("true", replay.header(IdempotencyGuard.REPLAYED_HEADER));
  }

  @Test
  void flavoursChangeStatusesMarkerStorageAndFingerprint() throws Exception {
    guard = guard(b -> b.mismatchStatus(417).inFlightRetryAfter(null).replayMarker(false)
        .storagePolicy(StoragePolicy.STORE_ALL).fingerprintMode(FingerprintMode.RAW_BYTES));
    send(json("f1", "{\"a\":1,\"b\":2}"));
    assertEquals(417, send(json("f1", "{\"b\":2,\"a\":1}")).status(), "raw bytes: reordered JSON is another payload");
    GuardResponse unmarked = send(json("f1", "{\"a\":1,\"b\":2}"));
    assertEquals("order-1", unmarked.bodyUtf8());
    assertNull(unmarked.header(IdempotencyGuard.REPLAYED_HEADER));

    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(json("f2", "{}")));
    GuardResponse inFlight = send(json("f2", "{}"));
    assertEquals(409, inFlight.status());
    assertNull(inFlight.header("Retry-After"));
    assertEquals(CompletionResult.STORED, guard.complete(p.claim(), new CapturedResponse(503, Map.of(), "busy".getBytes())));
    assertEquals(503, send(json("f2", "{}")).status(), "5xx stored and replayed");
    assertEquals(1, effects.get());
  }
}
