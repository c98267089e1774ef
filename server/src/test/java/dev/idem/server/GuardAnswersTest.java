package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import dev.idem.core.testing.VirtualTime;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The answers the guard gives itself, as the API's clients read them (issue 27): the renderer
 * presets, the storage policy per route, and the operation id of a 202 resource.
 */
class GuardAnswersTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();

  private IdempotencyGuard guard(Consumer<IdempotencyGuard.Builder> settings) {
    IdempotencyGuard.Builder b = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler()).storeExecutor(Runnable::run)
        .purgeInterval(null).maxRequestBody(64);
    settings.accept(b);
    return b.build();
  }

  static GuardRequest post(String key, String json) {
    return new GuardRequest("POST", "/v1/customers", null, "application/json", key == null ? List.of() : List.of(key),
        "acct_1", GuardRequest.BodyReader.of(json.getBytes(StandardCharsets.UTF_8)));
  }

  private static GuardResponse respond(IdempotencyGuard g, GuardRequest r) throws Exception {
    return assertInstanceOf(Admission.Respond.class, g.admit(r)).response();
  }

  /** As stripe-node decides: an error if and only if the JSON body has an {@code error} member. */
  private static boolean stripeClientSeesAnError(GuardResponse r) throws Exception {
    JsonNode body = JSON.readTree(r.body());
    return body.has("error");
  }

  /** Every refusal the guard can give, keyed by kind. */
  private static Map<Refusal.Kind, GuardResponse> everyRefusal(IdempotencyGuard g) throws Exception {
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, g.admit(post("k1", "{\"name\":\"a\"}")));
    GuardResponse inFlight = respond(g, post("k1", "{\"name\":\"a\"}"));
    GuardResponse reused = respond(g, post("k1", "{\"name\":\"b\"}"));
    g.complete(p.claim(), CapturedResponse.json(200, "{\"id\":\"cus_1\"}"));
    return Map.of(
        Refusal.Kind.KEY_MISSING, respond(g, post(null, "{}")),
        Refusal.Kind.KEY_MALFORMED, respond(g, post("clé", "{}")),
        Refusal.Kind.KEY_REUSED, reused,
        Refusal.Kind.IN_FLIGHT, inFlight,
        Refusal.Kind.BODY_TOO_LARGE, respond(g, post("k2", "{\"name\":\"" + "x".repeat(100) + "\"}")),
        Refusal.Kind.IDENTITY_UNSTORABLE, respond(g, new GuardRequest("POST", "/v1/customers", null,
            "application/json", List.of("k3"), "acct_\u0000", GuardRequest.BodyReader.of(new byte[0]))),
        Refusal.Kind.CLAIM_LOST, g.refusedResponse(),
        Refusal.Kind.STORE_UNAVAILABLE, g.unavailableResponse(),
        Refusal.Kind.HANDLER_FAILED, g.failedResponse());
  }

  @Test
  void theDefaultIsTheIetfDraftsProblemJson() throws Exception {
    Map<Refusal.Kind, GuardResponse> r = everyRefusal(guard(b -> {}));
    Map<Refusal.Kind, Integer> statuses = Map.of(Refusal.Kind.KEY_MISSING, 400, Refusal.Kind.KEY_MALFORMED, 400,
        Refusal.Kind.KEY_REUSED, 422, Refusal.Kind.IN_FLIGHT, 409, Refusal.Kind.BODY_TOO_LARGE, 413,
        Refusal.Kind.IDENTITY_UNSTORABLE, 400, Refusal.Kind.CLAIM_LOST, 409, Refusal.Kind.STORE_UNAVAILABLE, 503,
        Refusal.Kind.HANDLER_FAILED, 500);
    assertEquals(Refusal.Kind.values().length, r.size(), "every kind is given once");
    for (Map.Entry<Refusal.Kind, GuardResponse> e : r.entrySet()) {
      GuardResponse g = e.getValue();
      assertEquals(statuses.get(e.getKey()), g.status(), e.getKey().toString());
      assertEquals("application/problem+json", g.header("Content-Type"));
      JsonNode body = JSON.readTree(g.body());
      assertTrue(body.get("type").asText().startsWith("urn:idem:problem:"), body.toString());
      assertEquals(g.status(), body.get("status").asInt());
      assertEquals(e.getKey().retryable() && e.getKey() != Refusal.Kind.HANDLER_FAILED,
          g.header("Retry-After") != null, e.getKey().toString());
    }
    assertEquals("urn:idem:problem:idempotency-key-in-flight",
        JSON.readTree(r.get(Refusal.Kind.IN_FLIGHT).body()).get("type").asText());
  }

  /**
   * Issue 27: stripe-node took the guard's problem+json refusals (a reused key, a 409 in flight)
   * for a customer with an undefined id, because it raises only on a body with an {@code error}
   * member. In Stripe's shape every refusal is an error to such a client.
   */
  @Test
  void theStripePresetAnswersEveryRefusalAsAStripeError() throws Exception {
    Map<Refusal.Kind, GuardResponse> r = everyRefusal(guard(b -> b.renderer(GuardRenderer.stripe())));
    for (Map.Entry<Refusal.Kind, GuardResponse> e : r.entrySet()) {
      GuardResponse g = e.getValue();
      assertTrue(stripeClientSeesAnError(g), e.getKey() + ": " + g.bodyUtf8());
      assertEquals("application/json", g.header("Content-Type"));
      assertEquals(Boolean.toString(e.getKey().retryable()), g.header("Stripe-Should-Retry"), e.getKey().toString());
      assertFalse(JSON.readTree(g.body()).get("error").get("message").asText().isBlank());
    }
    GuardResponse reused = r.get(Refusal.Kind.KEY_REUSED);
    assertEquals(400, reused.status(), "Stripe answers a reused key 400, whatever the mismatch status");
    assertEquals("idempotency_error", JSON.readTree(reused.body()).get("error").get("type").asText());
    GuardResponse inFlight = r.get(Refusal.Kind.IN_FLIGHT);
    assertEquals(409, inFlight.status());
    assertEquals("idempotency_key_in_use", JSON.readTree(inFlight.body()).get("error").get("code").asText());
    assertEquals("true", inFlight.header("Stripe-Should-Retry"));
    assertEquals("1", inFlight.header("Retry-After"));
    assertEquals(503, r.get(Refusal.Kind.STORE_UNAVAILABLE).status());
  }

  @Test
  void replaysCarryTheRenderersMarkerUnlessTheMarkerIsOff() throws Exception {
    GuardRenderer custom = new GuardRenderer() {
      @Override
      public GuardResponse refusal(Refusal refusal) {
        return GuardRenderer.problemJson().refusal(refusal);
      }

      @Override
      public Map<String, List<String>> replayHeaders() {
        return Map.of("X-Replayed", List.of("yes"));
      }
    };
    for (boolean marker : new boolean[] {true, false}) {
      IdempotencyGuard g = guard(b -> b.renderer(custom).replayMarker(marker));
      String key = "m-" + marker;
      Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, g.admit(post(key, "{}")));
      g.complete(p.claim(), CapturedResponse.json(201, "{}"));
      GuardResponse replay = respond(g, post(key, "{}"));
      assertEquals(marker ? "yes" : null, replay.header("X-Replayed"));
      assertNull(replay.header(IdempotencyGuard.REPLAYED_HEADER));
    }
  }

  @Test
  void theStoragePolicyIsSetPerRoute() throws Exception {
    IdempotencyGuard g = guard(b -> b.route("POST", "/v1/customers",
        new RoutePolicy(true, Duration.ofHours(24)).storing(StoragePolicy.STORE_BELOW_500)));
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, g.admit(post("r1", "{}")));
    assertEquals(CompletionResult.RELEASED, g.complete(p.claim(), CapturedResponse.json(500, "{}")),
        "this route releases on any 5xx, as before issue 27");

    IdempotencyGuard defaults = guard(b -> {});
    Admission.Proceed q = assertInstanceOf(Admission.Proceed.class, defaults.admit(post("r2", "{}")));
    assertEquals(CompletionResult.STORED, defaults.complete(q.claim(), CapturedResponse.json(500, "{}")),
        "the default stores a 500: the effect may have committed before it");
    Admission.Proceed s = assertInstanceOf(Admission.Proceed.class, defaults.admit(post("r3", "{}")));
    assertEquals(CompletionResult.RELEASED, defaults.complete(s.claim(), CapturedResponse.json(503, "{}")),
        "503 says nothing was done");
  }

  /**
   * Seed 000's third option: a long operation answers 202 with an operation resource, and every
   * later request with the key gets the same operation. The stored 202 is replayed; and the id is
   * the same even for a run after a takeover, so the job it names cannot start twice.
   */
  @Test
  void a202OperationResourceKeepsItsIdForEveryRequestWithTheKey() throws Exception {
    IdempotencyGuard g = guard(b -> {});
    Admission.Proceed crashed = assertInstanceOf(Admission.Proceed.class, g.admit(post("long-1", "{}")));
    String id = crashed.claim().operationId();
    time.jump(Duration.ofSeconds(31)); // the first run's holder stalled: its lease expired
    Admission.Proceed again = assertInstanceOf(Admission.Proceed.class, g.admit(post("long-1", "{}")));
    assertEquals(2, again.claim().generation());
    assertEquals(id, again.claim().operationId(), "the run after the takeover names the same operation");
    g.complete(again.claim(), CapturedResponse.json(202, "{\"operation\":\"" + id + "\",\"status\":\"pending\"}")
        .withHeader("Location", "/operations/" + id));

    GuardResponse replay = respond(g, post("long-1", "{}"));
    assertEquals(202, replay.status());
    assertEquals("/operations/" + id, replay.header("Location"));
    assertTrue(replay.bodyUtf8().contains(id));
    assertTrue(id.matches("op_[0-9a-f]{32}"), id);
    assertNotEquals(id, new RecordId("acct_1", "POST /v1/customers", "long-2").operationId());
    assertNotEquals(id, new RecordId("acct_2", "POST /v1/customers", "long-1").operationId());
    assertEquals(id, new RecordId("acct_1", "POST /v1/customers", "long-1").operationId());
  }
}
