package dev.idem.spring.boot.txroute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.RecordStats;
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
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * Review (guard24): docs/spring.md, transactional mode: an async handler in transactional mode
 * "fails to start". Only for {@code @Idempotent(transactional = true)}: a route made transactional
 * in properties ({@code idem.server.transactional=true}, {@code idem.server.routes=...}) whose
 * handler returns a {@code CompletableFuture} started, and each keyed request committed the claim,
 * the handler's writes and the answer it had when the method returned (201, empty body), which was
 * then replayed to every retry. Such a route is now refused at startup where the route's pattern
 * covers the handler's mapping, and otherwise (a route that names one path of a broader mapping)
 * at the request, before the handler runs, with nothing stored.
 */
class TransactionalRouteAsyncReviewTest {
  @SpringBootApplication
  static class App {
    @Bean
    AtomicInteger effects() {
      return new AtomicInteger();
    }

    @Bean
    Orders orders(AtomicInteger effects) {
      return new Orders(effects);
    }
  }

  @RestController
  static class Orders {
    private final AtomicInteger effects;

    Orders(AtomicInteger effects) {
      this.effects = effects;
    }

    @PostMapping("/tx-route-async/{id}")
    @ResponseStatus(HttpStatus.CREATED)
    CompletableFuture<Map<String, Object>> create(@PathVariable String id, @RequestBody Map<String, Object> order) {
      effects.incrementAndGet();
      return CompletableFuture.completedFuture(Map.of("id", id, "item", order.get("item")));
    }
  }

  private static SpringApplicationBuilder app(String route) throws Exception {
    Path dir = Files.createTempDirectory("idem-tx-route-async-");
    return new SpringApplicationBuilder(App.class).properties(
        "server.port=0", "idem.client.enabled=false", "idem.outbox.enabled=false",
        "idem.server.store=datasource", "idem.server.transactional=true", "idem.server.routes=" + route,
        "idem.directory=" + dir.resolve("idem"), "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"));
  }

  @Test
  void aTransactionalRouteOverAnAsyncHandlerIsRefusedWhenTheAppStarts() throws Exception {
    SpringApplicationBuilder app = app("POST /tx-route-async/*");

    Exception e = assertThrows(Exception.class, () -> app.run().close());

    String why = String.valueOf(NestedExceptionUtils.getMostSpecificCause(e).getMessage());
    assertTrue(why.contains("idem.server.routes") && why.contains("answers asynchronously")
        && why.contains("Use lease mode"), why);
  }

  @Test
  void aTransactionalRouteThatReachesAnAsyncHandlerOnlyAtTheRequestIsRefusedThenWithNothingStored() throws Exception {
    // One path of the handler's mapping: which handler serves it is known only per request.
    try (ConfigurableApplicationContext ctx = app("POST /tx-route-async/42").run()) {
      AtomicInteger effects = ctx.getBean(AtomicInteger.class);
      IdempotencyGuard guard = ctx.getBean(IdempotencyGuard.class);
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
              + ctx.getEnvironment().getProperty("local.server.port") + "/tx-route-async/42"))
          .header("Content-Type", "application/json").header("Idempotency-Key", "k-route-async")
          .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}")).build();

      HttpResponse<String> first = http.send(request, HttpResponse.BodyHandlers.ofString());
      assertEquals(500, first.statusCode(), first.body());
      assertEquals(0, effects.get(), "refused before the handler ran");
      assertNothingStored(guard);

      HttpResponse<String> retried = http.send(request, HttpResponse.BodyHandlers.ofString());
      assertEquals(500, retried.statusCode(), "no empty answer stored to replay; " + retried.body());
      assertTrue(retried.headers().firstValue("Idempotent-Replayed").isEmpty());
      assertEquals(0, effects.get());
      assertNothingStored(guard);
    }
  }

  private static void assertNothingStored(IdempotencyGuard guard) {
    RecordStats s = guard.stats();
    assertEquals(0, s.inFlight() + s.stuck() + s.completed() + s.released(), s.toString());
  }
}
