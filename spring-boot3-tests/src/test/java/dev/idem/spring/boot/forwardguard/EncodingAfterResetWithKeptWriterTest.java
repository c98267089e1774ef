package dev.idem.spring.boot.forwardguard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
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
 * <p>Review of 71b27dc0 ({@code IdempotencyFilter.CapturingResponse} now keeps its writer across
 * {@code reset()}). Its {@code setCharacterEncoding} is ignored while it has a writer, which it now
 * has for good once {@code getWriter()} was called: a lease-mode handler that began a text answer
 * through the writer, failed, reset the response and wrote its error as UTF-8 through the stream
 * ({@code setCharacterEncoding("UTF-8")}, then {@code new OutputStreamWriter(getOutputStream(),
 * getCharacterEncoding())}) gets UTF-8 on Tomcat (its reset clears the writer, and the encoding is
 * taken: "text/plain;charset=UTF-8", "créé ✓"). Guarded, the encoding is dropped: the keyed
 * request's client gets the Content-Type without the charset and the text encoded in ISO-8859-1
 * ("cr\u00E9\u00E9 ?"), which a UTF-8 client reads as garbage, and that answer is stored and
 * replayed to every retry. Before 71b27dc0 the reset dropped the writer and the encoding was taken.
 */
class EncodingAfterResetWithKeptWriterTest {
  @SpringBootApplication
  static class App {
    @Bean
    Exports exports() {
      return new Exports();
    }
  }

  @Controller
  static class Exports {
    @PostMapping({"/rv-lease-encoding", "/rv-plain-encoding"})
    void export(HttpServletResponse response) throws IOException {
      response.setContentType("text/plain");
      response.getWriter().print("row 1\n");
      response.reset();
      response.setStatus(422);
      response.setCharacterEncoding("UTF-8");
      response.setContentType("text/plain");
      Writer w = new OutputStreamWriter(response.getOutputStream(), response.getCharacterEncoding());
      w.write("créé ✓");
      w.flush();
    }
  }

  @Test
  void theEncodingSetAfterAResetIsTheAnswers() throws Exception {
    Path dir = Files.createTempDirectory("idem-rv-encoding-");
    try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(App.class).properties(
        "server.port=0", "idem.client.enabled=false", "idem.outbox.enabled=false",
        "idem.server.store=datasource", "idem.server.transactional=false", "idem.server.routes=POST /rv-lease-encoding",
        "idem.directory=" + dir.resolve("idem"), "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db")).run()) {
      String base = "http://127.0.0.1:" + ctx.getEnvironment().getProperty("local.server.port");
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

      HttpResponse<String> unguarded = http.send(HttpRequest.newBuilder(URI.create(base + "/rv-plain-encoding"))
          .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      assertEquals("créé ✓", unguarded.body(), "Tomcat's own reset, on a path the guard does not cover");
      assertEquals("text/plain;charset=UTF-8", unguarded.headers().firstValue("Content-Type").orElse(null));

      HttpResponse<String> first = http.send(HttpRequest.newBuilder(URI.create(base + "/rv-lease-encoding"))
          .header("Content-Type", "application/json").header("Idempotency-Key", "k-rv-encoding")
          .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      assertEquals(422, first.statusCode(), first.body());
      assertEquals("text/plain;charset=UTF-8", first.headers().firstValue("Content-Type").orElse(null),
          "the keyed request's Content-Type");
      assertEquals("créé ✓", first.body(), "the keyed request's client");
    }
  }
}
