package dev.idem.spring.boot.txfn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.RecordStats;
import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * docs/spring.md: transactional mode does not cover handlers that answer asynchronously. The
 * startup and per-request checks only look at annotated controller methods
 * ({@code RequestMappingHandlerMapping}) by their declared return type: a functional endpoint
 * ({@code RouterFunction}) that answers {@code ServerResponse.async(...)} under a transactional
 * route started, ran, and its claim, its writes and the empty answer it had when the handler
 * returned committed together, to be replayed to every retry. Which answer a functional handler
 * gives is known only once it ran, so the guard checks after the chain returns: the run rolls back
 * (claim and the handler's row), nothing is stored, the client gets the guard's 500 at once, and
 * the late answer, completed by the test only after that, never reaches the client. The same holds
 * for an {@code @Idempotent(transactional = true)} method declared to return {@code Object} that
 * returns a {@code CompletableFuture}, which the startup check cannot see, and for an async
 * answer that is done before the handler's call returns, whose dispatch is then already on its way.
 */
class TransactionalRouteFunctionalAsyncReviewTest {
  /** The handlers' late answers, completed by the test, and whether any of them was ever written. */
  static final class Late {
    final BlockingQueue<CompletableFuture<ServerResponse>> functional = new LinkedBlockingQueue<>();
    final BlockingQueue<CompletableFuture<Map<String, Object>>> annotated = new LinkedBlockingQueue<>();
    final AtomicInteger runs = new AtomicInteger();
    final AtomicInteger written = new AtomicInteger();
  }

  @SpringBootApplication
  static class App {
    @Bean
    Late late() {
      return new Late();
    }

    @Bean
    RouterFunction<ServerResponse> orders(JdbcTemplate jdbc, Late late) {
      return RouterFunctions.route().POST("/fn-async/{id}", request -> {
        late.runs.incrementAndGet();
        jdbc.update("INSERT INTO orders(item) VALUES (?)", request.pathVariable("id"));
        CompletableFuture<ServerResponse> answer = new CompletableFuture<>();
        late.functional.add(answer);
        return ServerResponse.async(answer);
      }).build();
    }

    @Bean
    Annotated annotated(JdbcTemplate jdbc, Late late) {
      return new Annotated(jdbc, late);
    }
  }

  @RestController
  static class Annotated {
    private final JdbcTemplate jdbc;
    private final Late late;

    Annotated(JdbcTemplate jdbc, Late late) {
      this.jdbc = jdbc;
      this.late = late;
    }

    /** Declared as Object: the startup check cannot tell that it answers asynchronously. */
    @PostMapping("/object-async/{id}")
    @Idempotent(transactional = true)
    Object create(@PathVariable String id) {
      late.runs.incrementAndGet();
      jdbc.update("INSERT INTO orders(item) VALUES (?)", id);
      CompletableFuture<Map<String, Object>> answer = new CompletableFuture<>();
      late.annotated.add(answer);
      return answer;
    }

    /**
     * Done already: Spring MVC dispatches its answer while the handler's call is on its way back to
     * the guard, so the dispatch is pending before the guard can end the request.
     */
    @PostMapping("/object-done/{id}")
    @Idempotent(transactional = true)
    Object done(@PathVariable String id) {
      late.runs.incrementAndGet();
      jdbc.update("INSERT INTO orders(item) VALUES (?)", id);
      return CompletableFuture.completedFuture(new LateBody(late));
    }
  }

  /** An answer that counts its writing: Jackson reads its property only to write it. */
  public static final class LateBody {
    private final Late late;

    LateBody(Late late) {
      this.late = late;
    }

    public String getLate() {
      late.written.incrementAndGet();
      return "late-answer";
    }
  }

  private static ConfigurableApplicationContext start() throws Exception {
    Path dir = AppDatabase.withOrders("idem-tx-fn-async-");
    // A functional handler's answer is known only once it ran: the app starts.
    return new SpringApplicationBuilder(App.class).properties(
        "server.port=0", "idem.client.enabled=false", "idem.outbox.enabled=false",
        "idem.server.store=datasource", "idem.server.transactional=true", "idem.server.routes=POST /fn-async/*",
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.directory=" + dir.resolve("idem"), "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db")).run();
  }

  @Test
  void aTransactionalRouteOverAnAsyncFunctionalEndpointRollsBackAndDropsTheLateAnswer() throws Exception {
    try (ConfigurableApplicationContext ctx = start()) {
      Late late = ctx.getBean(Late.class);
      assertRolledBackEveryTime(ctx, "/fn-async/42", () -> late.functional.remove().complete(
          ServerResponse.status(201).build((req, res) -> {
            late.written.incrementAndGet();
            res.getWriter().write("late-answer");
            return null;
          })));
    }
  }

  @Test
  void anAsyncAnswerDoneBeforeTheHandlerReturnedIsDroppedToo() throws Exception {
    try (ConfigurableApplicationContext ctx = start()) {
      assertRolledBackEveryTime(ctx, "/object-done/42", () -> {});
    }
  }

  @Test
  void anAnnotatedHandlerThatReturnsAFutureAsObjectRollsBackAndDropsTheLateAnswer() throws Exception {
    try (ConfigurableApplicationContext ctx = start()) {
      Late late = ctx.getBean(Late.class);
      assertRolledBackEveryTime(ctx, "/object-async/42",
          () -> late.annotated.remove().complete(Map.of("late", "late-answer")));
    }
  }

  private static void assertRolledBackEveryTime(ConfigurableApplicationContext ctx, String path, Runnable completeLate)
      throws Exception {
    Late late = ctx.getBean(Late.class);
    IdempotencyGuard guard = ctx.getBean(IdempotencyGuard.class);
    JdbcTemplate jdbc = ctx.getBean(JdbcTemplate.class);
    String failed = new String(guard.failedResponse().body(), StandardCharsets.UTF_8);
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    // The timeout only turns a request that waits for its late answer into a failure, not a hang.
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + ctx.getEnvironment().getProperty("local.server.port") + path))
        .timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json").header("Idempotency-Key", "k-async")
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}")).build();

    for (int attempt = 1; attempt <= 2; attempt++) {
      // Answered before the late answer exists: the test completes it only afterwards.
      HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
      completeLate.run();

      assertEquals(500, answer.statusCode(), "attempt " + attempt + ": " + answer.body());
      assertEquals(failed, answer.body(), "attempt " + attempt + ": the guard's own answer, nothing of the late one");
      assertTrue(answer.headers().firstValue("Idempotent-Replayed").isEmpty(), "attempt " + attempt + " replayed");
      assertEquals(attempt, late.runs.get(), "the handler runs on every attempt: nothing was stored to replay");
      assertEquals(0, jdbc.queryForObject("SELECT COUNT(*) FROM orders", Integer.class),
          "attempt " + attempt + ": the handler's row rolled back with the claim");
      RecordStats s = guard.stats();
      assertEquals(0, s.inFlight() + s.stuck() + s.completed() + s.released(), "attempt " + attempt + ": " + s);
    }
    assertEquals(0, late.written.get(), "a late answer was written");
  }
}
