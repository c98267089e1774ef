package dev.idem.spring.boot.rsserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code @Idempotent} on a {@code @GetMapping} handler guards nothing, and nothing says so.
 * {@code GuardFilter.resolve} looks annotated handlers up only for methods other than GET, HEAD and
 * OPTIONS (an internal Javadoc says so; neither docs/spring.md nor {@code @Idempotent}'s Javadoc
 * does), and {@code IdempotentPlacement} does not refuse the mark: the method is a handler. So a
 * GET handler the app marked (an export or a "confirm" link that makes an effect, where a client
 * retries with the same key) runs once per request, while {@code @Idempotent} promises "a request
 * with an Idempotency-Key runs the handler at most once per key" and the docs promise that a mark
 * that would guard nothing fails the startup. The same GET named in {@code idem.server.routes}
 * ("GET /export") is guarded: the two ways to guard a handler disagree.
 *
 * <p>Expected: either the startup fails naming the method (as for every other mark that guards
 * nothing), or the handler runs once for two GETs with one key. Before a fix: the app starts and
 * the handler runs twice.
 */
class RvRsserverIdempotentGetHandlerUnguardedTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @Test
  void aMarkedGetHandlerIsGuardedOrRefused(@TempDir Path dir) throws Exception {
    ConfigurableApplicationContext app;
    try {
      app = new SpringApplicationBuilder(App.class).properties(
          "server.port=0",
          "idem.directory=" + dir.resolve("idem"),
          "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
          "idem.client.enabled=false",
          "idem.outbox.enabled=false").run();
    } catch (RuntimeException refused) {
      // A fix that refuses the mark: the startup names the handler.
      Throwable t = refused;
      StringBuilder all = new StringBuilder();
      while (t != null) {
        all.append(t.getMessage()).append('\n');
        t = t.getCause();
      }
      assertTrue(all.toString().contains("export"), "the refusal names the handler: " + all);
      return;
    }
    try (app) {
      String base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
      HttpRequest get = HttpRequest.newBuilder(URI.create(base + "/export")).header("Idempotency-Key", "export-1")
          .GET().build();
      HttpResponse<String> first = HTTP.send(get, HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> retry = HTTP.send(get, HttpResponse.BodyHandlers.ofString());
      assertEquals(200, first.statusCode(), first.body());
      assertEquals(1, app.getBean(Exports.class).runs.get(), "@Idempotent on a GET handler: the retry with the same"
          + " key ran the handler again (answers: " + first.body() + ", " + retry.body() + "; retry replayed: "
          + retry.headers().firstValue("Idempotent-Replayed").orElse("no") + ")");
    }
  }

  /**
   * The fix guards a marked GET handler as a GET route is: a keyed retry gets the stored answer
   * (marked replayed), and a GET without a key runs unguarded, every time, not refused.
   */
  @Test
  void aMarkedGetHandlerIsGuardedAsAGetRouteIs(@TempDir Path dir) throws Exception {
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).properties(
        "server.port=0",
        "idem.directory=" + dir.resolve("idem"),
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.client.enabled=false",
        "idem.outbox.enabled=false").run()) {
      String base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
      HttpRequest keyed = HttpRequest.newBuilder(URI.create(base + "/export")).header("Idempotency-Key", "export-1")
          .GET().build();
      HttpRequest unkeyed = HttpRequest.newBuilder(URI.create(base + "/export")).GET().build();
      HttpResponse<String> first = HTTP.send(keyed, HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> retry = HTTP.send(keyed, HttpResponse.BodyHandlers.ofString());
      assertEquals("export job 1", first.body());
      assertEquals("export job 1", retry.body(), "the retry gets the stored answer");
      assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse("no"));
      HttpResponse<String> plain1 = HTTP.send(unkeyed, HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> plain2 = HTTP.send(unkeyed, HttpResponse.BodyHandlers.ofString());
      assertEquals(200, plain1.statusCode(), plain1.body());
      assertEquals("export job 2", plain1.body(), "a GET without a key runs unguarded");
      assertEquals("export job 3", plain2.body(), "a GET without a key runs unguarded, every time");
      assertEquals(3, app.getBean(Exports.class).runs.get());
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Exports.class)
  static class App {}

  @RestController
  static class Exports {
    final AtomicInteger runs = new AtomicInteger();

    @GetMapping("/export")
    @Idempotent
    String export() {
      return "export job " + runs.incrementAndGet();
    }
  }
}
