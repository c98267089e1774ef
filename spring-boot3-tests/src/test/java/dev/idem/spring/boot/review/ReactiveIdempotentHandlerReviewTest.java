package dev.idem.spring.boot.review;

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
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * b0984a7c makes a reactive (WebFlux) app fail its startup on {@code idem.server.routes}, because
 * the guard is a servlet filter and "guarded routes ran once per retry, without a word". The other
 * way to guard a route, the one the README's quickstart and Idempotent's javadoc show, is
 * {@code @Idempotent} on the handler: in a WebFlux app nothing reads it either, and the check does
 * not look for it. The app starts without a word, and a retried order (the same Idempotency-Key)
 * runs its handler again: a second charge.
 *
 * <p>Expected: the startup fails naming {@code @Idempotent} (as it does for idem.server.routes), or
 * the retry is replayed. Actual: the app starts and the handler runs once per retry.
 */
class ReactiveIdempotentHandlerReviewTest {
  @SpringBootApplication
  @Import(Orders.class)
  static class App {}

  @RestController
  static class Orders {
    final AtomicInteger runs = new AtomicInteger();

    @PostMapping("/orders")
    @Idempotent
    String order(@RequestBody String order) {
      return "order " + runs.incrementAndGet();
    }
  }

  @Test
  void anIdempotentHandlerInAReactiveAppFailsTheStartupOrRunsOncePerKey(@TempDir Path dir) throws Exception {
    ConfigurableApplicationContext context;
    try {
      context = new SpringApplicationBuilder(App.class).web(WebApplicationType.REACTIVE).properties(
          "server.port=0", "server.address=127.0.0.1", "idem.directory=" + dir.resolve("idem"),
          "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"), "idem.client.enabled=false",
          "idem.outbox.enabled=false").run();
    } catch (RuntimeException e) {
      StringBuilder sb = new StringBuilder();
      for (Throwable c = e; c != null; c = c.getCause()) {
        sb.append(c.getMessage()).append('\n');
      }
      assertTrue(sb.toString().contains("Idempotent"), sb.toString());
      return;
    }
    try (context) {
      int port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
      HttpClient http = HttpClient.newHttpClient();
      Orders orders = context.getBean(Orders.class);
      for (int i = 0; i < 2; i++) {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
            .header("Content-Type", "text/plain").header("Idempotency-Key", "k-reactive")
            .POST(HttpRequest.BodyPublishers.ofString("book")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
      }
      assertEquals(1, orders.runs.get(), "a reactive app with an @Idempotent handler started, and a retry with the"
          + " same Idempotency-Key ran the handler again");
    }
  }

  /** The app that turned the guard off knows nothing guards it: its @Idempotent handler starts, as its routes do. */
  @Test
  void withTheServerOffAnIdempotentHandlerInAReactiveAppStarts(@TempDir Path dir) {
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
        .web(WebApplicationType.REACTIVE).properties("server.port=0", "server.address=127.0.0.1",
            "idem.directory=" + dir.resolve("idem"), "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
            "idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.enabled=false").run()) {
      assertEquals(0, context.getBean(Orders.class).runs.get());
    }
  }
}
