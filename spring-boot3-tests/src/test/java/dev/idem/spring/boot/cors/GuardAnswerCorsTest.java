package dev.idem.spring.boot.cors;

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
import org.springframework.web.bind.annotation.CrossOrigin;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Regression test for a defect found by review: a Spring MVC app that allows a browser front end
 * with {@code @CrossOrigin} (which Spring MVC applies inside the DispatcherServlet, behind the
 * guard's filter) and marks a handler {@code @Idempotent}. The first answer carried
 * {@code Access-Control-Allow-Origin}; the guard's replay for the same key (and its 422) did not,
 * so a browser refused to hand the replay to the page: the front end that retried a timed-out
 * order with its key could never read the order it placed.
 */
class GuardAnswerCorsTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final String SHOP = "https://shop.example";

  private static HttpRequest post(String base, String origin, String key, String body) {
    return HttpRequest.newBuilder(URI.create(base + "/orders")).header("Idempotency-Key", key)
        .header("Origin", origin).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build();
  }

  private static String allowed(HttpResponse<String> r) {
    return r.headers().firstValue("Access-Control-Allow-Origin").orElse(null);
  }

  @Test
  void theGuardsOwnAnswersCarryTheHandlersCorsAllowance(@TempDir Path dir) throws Exception {
    try (ConfigurableApplicationContext app = start(dir)) {
      String base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
      Orders orders = app.getBean(Orders.class);

      HttpResponse<String> first = HTTP.send(post(base, SHOP, "order-1", "{\"sku\":\"A1\"}"),
          HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> replay = HTTP.send(post(base, SHOP, "order-1", "{\"sku\":\"A1\"}"),
          HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> reused = HTTP.send(post(base, SHOP, "order-1", "{\"sku\":\"B2\"}"),
          HttpResponse.BodyHandlers.ofString());

      assertEquals(SHOP, allowed(first), first.headers().map().toString());
      assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse("no"));
      assertEquals(first.body(), replay.body());
      assertEquals(SHOP, allowed(replay), "the replay of the browser's order has no CORS allowance, so the browser"
          + " cannot read it: " + replay.headers().map());
      assertEquals(422, reused.statusCode());
      assertEquals(SHOP, allowed(reused), reused.headers().map().toString());
      assertEquals(1, orders.runs.get(), "the handler ran once for its key");
    }
  }

  @Test
  void anOriginTheHandlerRefusesIsRefusedBeforeAnythingIsClaimed(@TempDir Path dir) throws Exception {
    try (ConfigurableApplicationContext app = start(dir)) {
      String base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
      Orders orders = app.getBean(Orders.class);

      HttpResponse<String> foreign = HTTP.send(post(base, "https://evil.example", "order-2", "{\"sku\":\"A1\"}"),
          HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> shop = HTTP.send(post(base, SHOP, "order-2", "{\"sku\":\"A1\"}"),
          HttpResponse.BodyHandlers.ofString());

      assertEquals(403, foreign.statusCode(), foreign.body());
      assertEquals(null, allowed(foreign));
      assertEquals(200, shop.statusCode(), "the refused request claimed nothing: " + shop.headers().map());
      assertEquals("no", shop.headers().firstValue("Idempotent-Replayed").orElse("no"));
      assertEquals(SHOP, allowed(shop));
      assertEquals(1, orders.runs.get());
    }
  }

  private static ConfigurableApplicationContext start(Path dir) {
    return new SpringApplicationBuilder(App.class).properties(
        "server.port=0",
        "idem.directory=" + dir.resolve("idem"),
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.client.enabled=false",
        "idem.outbox.enabled=false").run();
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Orders.class)
  static class App {}

  @RestController
  @CrossOrigin(origins = SHOP)
  static class Orders {
    final AtomicInteger runs = new AtomicInteger();

    @PostMapping("/orders")
    @Idempotent
    String create(@RequestBody String body) {
      return "{\"order\":" + runs.incrementAndGet() + "}";
    }
  }
}
