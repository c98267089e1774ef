package dev.idem.spring.boot.asyncguard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.server.Idempotent;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * Review (guard23): docs/spring.md says lease mode "guards any handler", and {@code @Idempotent}
 * names no exception; but a Spring MVC handler that returns a {@code CompletableFuture} (or a
 * {@code Callable}, {@code DeferredResult}, {@code StreamingResponseBody}: Spring's async return
 * values) finishes its response on an async dispatch, after the filter chain has returned. The
 * guard's filter does not notice ({@code isAsyncStarted}): it stores and sends what it holds at
 * that point, the status and an empty body, and the handler's real answer never reaches the
 * client nor the store. The guard's filter skips async dispatches (shouldNotFilterAsyncDispatch).
 */
@SpringBootTest(classes = AsyncHandlerGuardReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class AsyncHandlerGuardReviewTest {
  @SpringBootApplication
  @org.springframework.context.annotation.Import(Orders.class)
  static class App {
    @Bean
    AtomicInteger effects() {
      return new AtomicInteger();
    }
  }

  @RestController
  static class Orders {
    private final AtomicInteger effects;

    Orders(AtomicInteger effects) {
      this.effects = effects;
    }

    @PostMapping("/async-orders")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent
    CompletableFuture<Map<String, Object>> create(@RequestBody Map<String, Object> order) {
      int n = effects.incrementAndGet(); // the effect
      return CompletableFuture.completedFuture(Map.of("order", n, "item", String.valueOf(order.get("item"))));
    }
  }

  @org.springframework.test.context.DynamicPropertySource
  static void stores(org.springframework.test.context.DynamicPropertyRegistry registry) throws IOException {
    Path dir = Files.createTempDirectory("idem-async-guard-");
    registry.add("idem.directory", () -> dir.resolve("idem").toString());
    registry.add("spring.datasource.url", () -> "jdbc:sqlite:" + dir.resolve("app.db"));
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;
  @Autowired
  AtomicInteger effects;

  private HttpResponse<String> post(String key) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/async-orders"))
        .header("Content-Type", "application/json").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void anAsyncHandlersAnswerReachesTheClientAndIsWhatTheRetryReplays() throws Exception {
    HttpResponse<String> first = post("k-async");
    HttpResponse<String> retry = post("k-async");

    assertEquals(201, first.statusCode(), first.body());
    assertEquals(1, effects.get(), "the handler ran once");
    assertEquals("{\"order\":1,\"item\":\"book\"}".length(), first.body().length(),
        "the first caller got the handler's answer, not: '" + first.body() + "'");
    assertEquals(first.body(), retry.body(), "the retry replays the handler's answer");
    assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
  }
}
