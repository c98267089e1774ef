package dev.idem.spring.boot.asyncguard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.spring.server.Idempotent;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * Spring MVC's async return values behind {@code @Idempotent} (lease mode): each answers its
 * client with the handler's answer, which is what a retry replays; a DeferredResult that times out
 * is not stored, and its key stays in flight (409) while the handler may still run, instead of
 * letting a retry run it beside the first (IdempotencyGuard.letGo). Before the fix the guard's filter stored and
 * sent what it held when the filter chain returned (the status and an empty body) and skipped the
 * async dispatch that wrote the real answer.
 */
@SpringBootTest(classes = AsyncHandlerKindsTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class AsyncHandlerKindsTest {
  private static final ExecutorService WORKER = Executors.newSingleThreadExecutor();

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

    @PostMapping("/future")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent
    CompletableFuture<String> future() {
      return CompletableFuture.completedFuture("future " + effects.incrementAndGet());
    }

    @PostMapping("/callable")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent
    Callable<String> callable() {
      return () -> "callable " + effects.incrementAndGet();
    }

    @PostMapping("/deferred")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent
    DeferredResult<String> deferred() {
      DeferredResult<String> result = new DeferredResult<>();
      WORKER.execute(() -> result.setResult("deferred " + effects.incrementAndGet()));
      return result;
    }

    @PostMapping("/streaming")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent
    StreamingResponseBody streaming() {
      return out -> out.write(("streamed " + effects.incrementAndGet()).getBytes(StandardCharsets.UTF_8));
    }

    @PostMapping("/stalled")
    @Idempotent
    DeferredResult<String> stalled(@RequestHeader("Idempotency-Key") String key) {
      effects.incrementAndGet();
      return new DeferredResult<>(50L); // never set: Spring answers 503 when it times out
    }
  }

  @org.springframework.test.context.DynamicPropertySource
  static void stores(org.springframework.test.context.DynamicPropertyRegistry registry) throws IOException {
    Path dir = Files.createTempDirectory("idem-async-kinds-");
    registry.add("idem.directory", () -> dir.resolve("idem").toString());
    registry.add("spring.datasource.url", () -> "jdbc:sqlite:" + dir.resolve("app.db"));
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;
  @Autowired
  AtomicInteger effects;

  @AfterAll
  static void stopWorker() {
    WORKER.shutdownNow();
  }

  private HttpResponse<String> post(String path, String key) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void futureCallableDeferredResultAndStreamingAnswersReachTheClientAndAreReplayed() throws Exception {
    for (String kind : new String[] {"future", "callable", "deferred", "streaming"}) {
      int before = effects.get();
      HttpResponse<String> first = post("/" + kind, "k-" + kind);
      HttpResponse<String> retry = post("/" + kind, "k-" + kind);

      assertEquals(201, first.statusCode(), kind);
      assertEquals(before + 1, effects.get(), kind + ": the handler ran once");
      String answer = (kind.equals("streaming") ? "streamed " : kind + " ") + (before + 1);
      assertEquals(answer, first.body(), kind);
      assertEquals(201, retry.statusCode(), kind);
      assertEquals(answer, retry.body(), kind + ": the retry replays the handler's answer");
      assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null), kind);
    }
  }

  /**
   * Spring MVC does not stop the work behind a DeferredResult (or Callable) that timed out: a retry
   * let in would run the handler beside it, so the claim is kept (let go, not released) and the
   * retry gets 409; after one to two leases a retry runs the handler again (server GuardLetGoTest).
   */
  @Test
  void aTimedOutDeferredResultIsNotStoredAndItsKeyStaysInFlight() throws Exception {
    int before = effects.get();
    HttpResponse<String> first = post("/stalled", "k-stalled");
    HttpResponse<String> retry = post("/stalled", "k-stalled");

    assertEquals(503, first.statusCode(), first.body());
    assertEquals(409, retry.statusCode(), retry.body());
    assertNull(retry.headers().firstValue("Idempotent-Replayed").orElse(null));
    assertEquals(before + 1, effects.get(), "the retry must not run the handler while the timed-out one may still");
  }
}
