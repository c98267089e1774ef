package dev.idem.spring.boot.forwardguard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.PostMapping;

/**
 * Regression test (found by a review this session).
 *
 * <p>Review of e28c3e0a (guard6), {@code BufferedResponse.reset()} (its {@code writer = null} predates
 * the commit, which added the stream's). A transactional handler that took the writer once
 * ({@code PrintWriter out = response.getWriter()}), began its answer, reset the response and wrote
 * the new answer through the same {@code out}: Tomcat keeps that writer working after a reset (the
 * same handler on an unguarded path answers "created"), but the held response flushes only the
 * writer it still knows, none, so the text stays in the old writer's encoder: the client gets 201
 * with an empty body, and that empty answer is committed and replayed to every retry.
 */
class TransactionalOldWriterAfterResetTest {
  @SpringBootApplication
  static class App {
    @Bean
    Orders orders() {
      return new Orders();
    }
  }

  @Controller
  static class Orders {
    @PostMapping({"/tx-reset", "/plain-reset"})
    void create(HttpServletResponse response) throws IOException {
      response.setContentType("text/plain");
      PrintWriter out = response.getWriter();
      out.print("draft");
      response.reset();
      response.setStatus(201);
      response.setContentType("text/plain");
      out.print("created");
    }
  }

  @Test
  void theAnswerWrittenThroughTheWriterTakenBeforeResetReachesTheClient() throws Exception {
    Path dir = Files.createTempDirectory("idem-rv-tx-reset-");
    try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(App.class).properties(
        "server.port=0", "idem.client.enabled=false", "idem.outbox.enabled=false",
        "idem.server.store=datasource", "idem.server.transactional=true", "idem.server.routes=POST /tx-reset",
        "idem.directory=" + dir.resolve("idem"), "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db")).run()) {
      String base = "http://127.0.0.1:" + ctx.getEnvironment().getProperty("local.server.port");
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

      HttpResponse<String> unguarded = http.send(HttpRequest.newBuilder(URI.create(base + "/plain-reset"))
          .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals("created", unguarded.body(), "Tomcat's own reset, on a path the guard does not cover");

      HttpResponse<String> first = http.send(HttpRequest.newBuilder(URI.create(base + "/tx-reset"))
          .header("Content-Type", "application/json").header("Idempotency-Key", "k-tx-reset")
          .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(201, first.statusCode(), first.body());
      assertEquals("created", first.body(), "the keyed request's client");
    }
  }
}
