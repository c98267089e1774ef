package dev.idem.spring.boot.leasethrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Lease mode (the default) and a handler that throws, as docs/spring.md says: an exception Spring
 * MVC answers (here a {@link ResponseStatusException}) is an answer like a returned one, stored and
 * replayed, so the handler runs once per key (in lease mode the guard cannot know whether an effect
 * was made before the throw, and replaying is the side that never makes it twice); an exception
 * that reaches the container releases the claim, and the retry runs the handler again. Transactional
 * mode rolls back on both ({@code TransactionalThrowReviewTest}).
 */
@SpringBootTest(classes = LeaseModeExceptionsTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class LeaseModeExceptionsTest {
  static final Path DIR = AppDatabase.withOrders("idem-lease-throw-");

  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, DIR);
  }

  @SpringBootApplication
  @Import(Orders.class)
  static class App {}

  @RestController
  static class Orders {
    /** Calls per key: the first one of each key throws, the next ones succeed. */
    final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    private boolean first(String key) {
      return calls.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet() == 1;
    }

    @PostMapping("/answered/{key}")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent
    Map<String, Object> answered(@PathVariable String key) {
      if (first(key)) {
        throw new ResponseStatusException(HttpStatus.CONFLICT, "out of stock");
      }
      return Map.of("key", key);
    }

    @PostMapping("/unanswered/{key}")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent
    Map<String, Object> unanswered(@PathVariable String key) {
      if (first(key)) {
        throw new IllegalStateException("a bug before any effect");
      }
      return Map.of("key", key);
    }
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;
  @Autowired
  Orders orders;

  private HttpResponse<String> post(String path, String key) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Content-Type", "application/json").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void anExceptionSpringAnswersIsStoredAndReplayedAndTheHandlerRunsOnce() throws Exception {
    HttpResponse<String> first = post("/answered/k-answered", "k-answered");
    assertEquals(409, first.statusCode(), first.body());
    assertTrue(first.headers().firstValue("Idempotent-Replayed").isEmpty());

    HttpResponse<String> retried = post("/answered/k-answered", "k-answered");
    assertEquals(409, retried.statusCode(), retried.body());
    assertEquals(Optional.of("true"), retried.headers().firstValue("Idempotent-Replayed"));
    assertEquals(first.body(), retried.body(), "the replay is the first answer");
    assertEquals(1, orders.calls.get("k-answered").get(), "the handler ran once for the key");
  }

  @Test
  void anExceptionThatReachesTheContainerReleasesTheClaimAndTheRetryRunsTheHandlerAgain() throws Exception {
    HttpResponse<String> first = post("/unanswered/k-unanswered", "k-unanswered");
    assertEquals(500, first.statusCode(), first.body());

    HttpResponse<String> retried = post("/unanswered/k-unanswered", "k-unanswered");
    assertEquals(201, retried.statusCode(), retried.body());
    assertTrue(retried.headers().firstValue("Idempotent-Replayed").isEmpty(), "the retry ran the handler");

    HttpResponse<String> replayed = post("/unanswered/k-unanswered", "k-unanswered");
    assertEquals(201, replayed.statusCode(), replayed.body());
    assertEquals(Optional.of("true"), replayed.headers().firstValue("Idempotent-Replayed"));
    assertEquals(2, orders.calls.get("k-unanswered").get(), "once throwing, once succeeding, then replayed");
  }
}
