package dev.idem.spring.boot.fnroutes;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * RouteSpellingTest for a functional endpoint: idem.server.routes names URL patterns, matched by the
 * guard on the request's path, not on the kind of handler, so a route over a {@code RouterFunction}
 * endpoint (Spring MVC's functional style) is guarded however the request spells its path, as one
 * over an annotated controller is. Spring MVC's router runs the handler for /fn-pay%6Dents and for
 * /fn-payments;v=1 too; a retried keyed payment must run once per key under each spelling.
 */
class FunctionalRouteSpellingTest {
  /** Handler runs per Idempotency-Key. */
  static final class Runs {
    final Map<String, AtomicInteger> byKey = new ConcurrentHashMap<>();
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    Runs runs() {
      return new Runs();
    }

    @Bean
    RouterFunction<ServerResponse> payments(Runs runs) {
      return RouterFunctions.route().POST("/fn-payments", request -> {
        String key = request.headers().firstHeader("Idempotency-Key");
        int n = runs.byKey.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        return ServerResponse.status(201).body("run " + n);
      }).build();
    }
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  static ConfigurableApplicationContext context;
  static int port;

  @BeforeAll
  static void start(@TempDir Path dir) {
    context = new SpringApplicationBuilder(App.class).properties("server.port=0", "server.address=127.0.0.1",
        "idem.directory=" + dir.resolve("idem"), "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.routes=POST /fn-payments").run();
    port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
  }

  @AfterAll
  static void stop() {
    if (context != null) {
      context.close();
    }
  }

  @Test
  void thePlainPathIsGuarded() throws Exception {
    assertEquals(1, runsAfterTwoSends("/fn-payments", "k-plain"));
  }

  @Test
  void anEncodedSpellingOfTheSamePathIsGuarded() throws Exception {
    assertEquals(1, runsAfterTwoSends("/fn-pay%6Dents", "k-encoded"));
  }

  @Test
  void aPathParameterOnTheSamePathIsGuarded() throws Exception {
    assertEquals(1, runsAfterTwoSends("/fn-payments;v=1", "k-param"));
  }

  /** Sends the same keyed payment twice (a client's retry); both get the first run's answer. */
  private static int runsAfterTwoSends(String path, String key) throws Exception {
    for (int i = 0; i < 2; i++) {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
          .header("Content-Type", "text/plain").header("Idempotency-Key", key)
          .POST(HttpRequest.BodyPublishers.ofString("10")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(201, r.statusCode(), path + " -> " + r.body());
      assertEquals("run 1", r.body(), path + ": the retry was not replayed");
    }
    return context.getBean(Runs.class).byKey.get(key).get();
  }
}
