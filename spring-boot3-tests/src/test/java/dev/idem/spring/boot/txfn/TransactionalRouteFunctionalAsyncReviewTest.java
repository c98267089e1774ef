package dev.idem.spring.boot.txfn;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * docs/spring.md: transactional mode does not cover handlers that answer asynchronously, and a
 * route made transactional in properties that reaches one fails the startup or is refused per
 * request, before anything is claimed or stored. The checks only look at annotated controller
 * methods ({@code RequestMappingHandlerMapping}): a functional endpoint ({@code RouterFunction})
 * that answers {@code ServerResponse.async(...)} under such a route starts, runs, and its claim,
 * writes and the empty answer it had when the handler returned commit together, to be replayed to
 * every retry.
 */
class TransactionalRouteFunctionalAsyncReviewTest {
  @SpringBootApplication
  static class App {
    @Bean
    AtomicInteger effects() {
      return new AtomicInteger();
    }

    @Bean
    RouterFunction<ServerResponse> orders(AtomicInteger effects) {
      return RouterFunctions.route().POST("/fn-async/{id}", request -> {
        effects.incrementAndGet();
        String id = request.pathVariable("id");
        return ServerResponse.async(CompletableFuture.supplyAsync(
            () -> ServerResponse.status(201).body(Map.of("id", id))));
      }).build();
    }
  }

  @Test
  void aTransactionalRouteOverAnAsyncFunctionalEndpointStoresNoEmptyAnswer() throws Exception {
    Path dir = Files.createTempDirectory("idem-tx-fn-async-");
    SpringApplicationBuilder app = new SpringApplicationBuilder(App.class).properties(
        "server.port=0", "idem.client.enabled=false", "idem.outbox.enabled=false",
        "idem.server.store=datasource", "idem.server.transactional=true", "idem.server.routes=POST /fn-async/*",
        "idem.directory=" + dir.resolve("idem"), "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"));
    ConfigurableApplicationContext ctx;
    try {
      ctx = app.run();
    } catch (Exception refusedAtStartup) {
      return;  // what the docs promise for a route that surely reaches such a handler
    }
    try (ctx) {
      AtomicInteger effects = ctx.getBean(AtomicInteger.class);
      IdempotencyGuard guard = ctx.getBean(IdempotencyGuard.class);
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
              + ctx.getEnvironment().getProperty("local.server.port") + "/fn-async/42"))
          .header("Content-Type", "application/json").header("Idempotency-Key", "k-fn-async")
          .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}")).build();

      HttpResponse<String> first = http.send(request, HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> retried = http.send(request, HttpResponse.BodyHandlers.ofString());

      RecordStats s = guard.stats();
      assertEquals(0, s.completed(), "a record was committed for an async answer that did not exist yet: first "
          + first.statusCode() + " '" + first.body() + "', retry " + retried.statusCode() + " '" + retried.body()
          + "' " + retried.headers().map() + "; " + s + "; handler runs " + effects.get());
      assertEquals(0, effects.get(), "refused before the handler ran");
    }
  }
}
