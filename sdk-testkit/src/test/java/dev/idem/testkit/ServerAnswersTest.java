package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.server.GuardRenderer;
import dev.idem.testkit.TestClient.Answer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 27 over HTTP, through the test kit's OkHttp client and a raw java.net.http client: a repeat
 * that waits for the first request instead of a 409, a long operation answered 202 with the same
 * operation resource for every request with its key, and refusals in Stripe's shape, which a
 * Stripe-style client (an error if and only if the body has an {@code error} member) recognises.
 */
class ServerAnswersTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final TestClient okhttp = new TestClient();
  private final HttpClient jdk = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final ExecutorService pool = Executors.newFixedThreadPool(2);

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  private HttpResponse<String> jdkPost(URI url, String key, String json) throws Exception {
    return jdk.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** stripe-node's rule: a response is an error if and only if its JSON body has an {@code error} member. */
  private static boolean stripeClientSeesAnError(String body) throws Exception {
    JsonNode node = JSON.readTree(body);
    return node != null && node.isObject() && node.has("error");
  }

  /** Sends both at once; whichever claims is slowed by the fault. */
  private <T> List<T> both(Callable<T> a, Callable<T> b) throws Exception {
    Future<T> x = pool.submit(a);
    Future<T> y = pool.submit(b);
    return List.of(x.get(20, TimeUnit.SECONDS), y.get(20, TimeUnit.SECONDS));
  }

  @Test
  void aRepeatWaitsForTheFirstRequestAndGetsItsResultInsteadOf409() throws Exception {
    try (IdempotentServer server = IdempotentServer.builder().inFlightWait(Duration.ofSeconds(5)).start()) {
      URI url = server.url("/orders");
      server.plan().forKey("k-ok", 2, Fault.slowProcessing(Duration.ofMillis(400)));
      List<Answer> ok = both(() -> okhttp.post(url, "k-ok", "{}"), () -> okhttp.post(url, "k-ok", "{}"));
      assertEquals(List.of(201, 201), ok.stream().map(Answer::status).toList(), "no 409");
      assertEquals(1, ok.stream().filter(Answer::isReplay).count(), "one ran, the other waited for its result");
      assertEquals(ok.get(0).body(), ok.get(1).body());
      assertEquals(1, server.effectCount("k-ok"));

      server.plan().forKey("k-jdk", 2, Fault.slowProcessing(Duration.ofMillis(400)));
      List<HttpResponse<String>> jdkAnswers = both(() -> jdkPost(url, "k-jdk", "{}"), () -> jdkPost(url, "k-jdk", "{}"));
      assertEquals(List.of(201, 201), jdkAnswers.stream().map(HttpResponse::statusCode).toList());
      assertEquals(1, jdkAnswers.stream().filter(r -> r.headers().firstValue("Idempotent-Replayed").isPresent()).count());
      assertEquals(1, server.effectCount("k-jdk"));
    }
  }

  @Test
  void aLongOperationIsOneOperationResourceForEveryRequestWithItsKey() throws Exception {
    EffectHandler accepting = r -> Reply.json(202, "{\"operation\":\"" + r.operationId() + "\",\"status\":\"pending\"}")
        .withHeader("Location", "/operations/" + r.operationId());
    try (IdempotentServer server = IdempotentServer.builder().handler(accepting).start()) {
      URI url = server.url("/exports");
      Answer first = okhttp.post(url, "k-export", "{\"month\":\"2026-01\"}");
      Answer again = okhttp.post(url, "k-export", "{\"month\":\"2026-01\"}");
      HttpResponse<String> third = jdkPost(url, "k-export", "{\"month\":\"2026-01\"}");
      Answer other = okhttp.post(url, "k-other", "{\"month\":\"2026-01\"}");

      assertEquals(202, first.status());
      String location = first.header("Location");
      assertTrue(location.matches("/operations/op_[0-9a-f]{32}"), location);
      assertEquals(location, again.header("Location"));
      assertEquals(first.body(), again.body());
      assertTrue(again.isReplay());
      assertEquals(202, third.statusCode());
      assertEquals(location, third.headers().firstValue("Location").orElseThrow());
      assertEquals(first.body(), third.body());
      assertNotEquals(location, other.header("Location"), "another key, another operation");
      assertEquals(1, server.effectCount("k-export"));
    }
  }

  /**
   * Issue 27: stripe-node resolved a reused key's 422 problem+json, and a 409, as a "customer" with
   * no id. With the Stripe preset every refusal is a Stripe error, with the should-retry header.
   */
  @Test
  void theStripePresetMakesEveryRefusalAnErrorToAStripeClient() throws Exception {
    try (IdempotentServer problems = IdempotentServer.start();
        IdempotentServer stripe = IdempotentServer.builder().renderer(GuardRenderer.stripe()).start()) {
      okhttp.post(problems.url("/v1/customers"), "k1", "{\"name\":\"a\"}");
      Answer asProblem = okhttp.post(problems.url("/v1/customers"), "k1", "{\"name\":\"b\"}");
      assertEquals(422, asProblem.status());
      assertFalse(stripeClientSeesAnError(asProblem.body()), "the case of the issue: a Stripe client sees success");

      URI url = stripe.url("/v1/customers");
      Answer created = okhttp.post(url, "k1", "{\"name\":\"a\"}");
      Answer reused = okhttp.post(url, "k1", "{\"name\":\"b\"}");
      HttpResponse<String> reusedJdk = jdkPost(url, "k1", "{\"name\":\"c\"}");
      Answer missing = okhttp.post(url, null, "{}");
      Answer replay = okhttp.post(url, "k1", "{\"name\":\"a\"}");

      assertFalse(stripeClientSeesAnError(created.body()));
      assertEquals(400, reused.status());
      assertTrue(stripeClientSeesAnError(reused.body()), reused.body());
      assertEquals("idempotency_error", JSON.readTree(reused.body()).get("error").get("type").asText());
      assertEquals("false", reused.header("Stripe-Should-Retry"));
      assertEquals(400, reusedJdk.statusCode());
      assertTrue(stripeClientSeesAnError(reusedJdk.body()), reusedJdk.body());
      assertTrue(stripeClientSeesAnError(missing.body()), missing.body());
      assertTrue(replay.isReplay(), "Idempotent-Replayed: true, as Stripe sends it");
      assertEquals(created.body(), replay.body());

      stripe.plan().forKey("k2", 2, Fault.slowProcessing(Duration.ofMillis(400)));
      List<Answer> race = both(() -> okhttp.post(url, "k2", "{}"), () -> okhttp.post(url, "k2", "{}"));
      List<Answer> conflicts = new ArrayList<>(race);
      conflicts.removeIf(a -> a.status() != 409);
      assertEquals(1, conflicts.size());
      Answer inFlight = conflicts.get(0);
      assertTrue(stripeClientSeesAnError(inFlight.body()), inFlight.body());
      assertEquals("true", inFlight.header("Stripe-Should-Retry"));
      assertEquals("idempotency_key_in_use", JSON.readTree(inFlight.body()).get("error").get("code").asText());
      assertEquals(1, stripe.effectCount("k1"));
      assertEquals(1, stripe.effectCount("k2"));
    }
  }
}
