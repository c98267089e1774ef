package dev.idem.spring.boot.corsguard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Regression test for a defect found by review, described as it was; fixed: the CORS processor, not GuardCors, tells whether a request is cross-origin.
 *
 * <p>Review finding on 50bb619f (the guard's own answers carry the handler's CORS allowance): the
 * guard's filter now calls {@code CorsUtils.isCorsRequest(request)} for every guarded request that
 * has an {@code Origin} header, first thing in {@code GuardCors.apply}, before it even looks whether
 * the handler has any CORS configuration, and without the {@code IllegalArgumentException} guard
 * that Spring's own {@code DefaultCorsProcessor} wraps around the same call. An {@code Origin} that
 * Spring's URI parser refuses ({@code http://bad host}, {@code https://shop.example:abc}) makes it
 * throw {@code InvalidUrlException} out of the filter.
 *
 * <p>Consequence: in an app with no CORS configuration at all (an ordinary server-to-server API,
 * where Spring MVC never looks at {@code Origin}), every keyed request to an {@code @Idempotent}
 * handler that carries such a header is answered 500 (and the container logs a SEVERE stack trace
 * per request), where the same request to an unguarded handler, or to this one before the commit,
 * runs the handler. With a CORS configuration Spring MVC answers such an origin 403, not 500. Any
 * client can send the header, so it is also a cheap way to flood the error log.
 */
class MalformedOriginTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final String MALFORMED = "http://bad host";

  private static HttpResponse<String> post(String base, String path, String key) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).header("Idempotency-Key", key)
        .header("Origin", MALFORMED).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A1\"}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aMalformedOriginDoesNotBreakAGuardedHandlerOfAnAppWithoutCors(@TempDir Path dir) throws Exception {
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).properties(
        "server.port=0",
        "idem.directory=" + dir.resolve("idem"),
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.client.enabled=false",
        "idem.outbox.enabled=false").run()) {
      String base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
      Orders orders = app.getBean(Orders.class);

      HttpResponse<String> unguarded = post(base, "/quotes", "quote-1");
      HttpResponse<String> guarded = post(base, "/orders", "order-1");

      assertEquals(200, unguarded.statusCode(), "Spring MVC ignores Origin for a handler without CORS: "
          + unguarded.body());
      assertEquals(200, guarded.statusCode(), "the same request to the @Idempotent handler of an app without any"
          + " CORS configuration was answered " + guarded.statusCode() + " (GuardCors lets CorsUtils' parse"
          + " failure out of the filter): " + guarded.body());
      assertEquals(1, orders.runs.get());
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Orders.class)
  static class App {}

  @RestController
  static class Orders {
    final AtomicInteger runs = new AtomicInteger();

    @PostMapping("/orders")
    @Idempotent
    String create(@RequestBody String body) {
      return "{\"order\":" + runs.incrementAndGet() + "}";
    }

    @PostMapping("/quotes")
    String quote(@RequestBody String body) {
      return "{\"quote\":1}";
    }
  }
}
