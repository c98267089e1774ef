package dev.idem.spring.boot.contentend;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Review: the guard's wrappers treat only {@code sendError}/{@code sendRedirect} as the end of the
 * answer. Tomcat also ends it when the content given to {@code setContentLength} was written, or
 * when the output stream is closed (Servlet spec 5.7): its facade then reads as committed and
 * ignores later status and header changes and later body. In both modes the guard took them into
 * the answer it sent, stored and replayed; a 201 the handler sends without the guard became a 500,
 * for the first client and every retry.
 */
@SpringBootTest(classes = AnswerEndedByContentReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.server.store=datasource",
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class AnswerEndedByContentReviewTest {
  static final Path DIR = AppDatabase.withOrders("idem-content-end-");

  @SpringBootApplication
  @Import(Orders.class)
  static class App {}

  @RestController
  static class Orders {
    private final JdbcTemplate jdbc;
    final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

    Orders(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PostMapping("/lease/{item}/{how}")
    @Idempotent
    void lease(@PathVariable String item, @PathVariable String how, HttpServletResponse response) throws IOException {
      answer(item, how, response);
    }

    @PostMapping("/tx/{item}/{how}")
    @Idempotent(transactional = true)
    void tx(@PathVariable String item, @PathVariable String how, HttpServletResponse response) throws IOException {
      answer(item, how, response);
    }

    /** The same handler without the guard: what Tomcat itself sends for it. */
    @PostMapping("/unguarded/{item}/{how}")
    void unguarded(@PathVariable String item, @PathVariable String how, HttpServletResponse response)
        throws IOException {
      answer(item, how, response);
    }

    /** The effect, a whole 201 answer that ends as the spec lets it end, then a late change. */
    private void answer(String item, String how, HttpServletResponse response) throws IOException {
      runs.computeIfAbsent(item, i -> new AtomicInteger()).incrementAndGet();
      jdbc.update("INSERT INTO orders(item) VALUES (?)", item);
      byte[] ok = "ok".getBytes(StandardCharsets.US_ASCII);
      response.setStatus(201);
      response.setContentType("text/plain");
      switch (how) {
        case "content-length" -> {
          response.setContentLength(ok.length);
          response.getOutputStream().write(ok); // all the declared content: Tomcat ends the answer here
        }
        case "close" -> {
          response.getOutputStream().write(ok);
          response.getOutputStream().close(); // commits and ends the answer
        }
        case "content-length-header" -> {
          response.setHeader("Content-Length", Integer.toString(ok.length)); // Tomcat takes it as setContentLength
          response.getOutputStream().write(ok);
        }
        case "writer-content-length" -> {
          response.setContentLength(ok.length);
          response.getWriter().print("ok"); // not flushed: Tomcat counts the text as it is written
        }
        case "content-length-then-write" -> {
          response.setContentLength(ok.length);
          response.getOutputStream().write(ok);
          try {
            response.getOutputStream().write(" and more".getBytes(StandardCharsets.US_ASCII));
          } catch (IOException refused) {
            // A container may refuse content past the declared length; the handler carries on.
          }
        }
        case "writer-close" -> {
          response.getWriter().print("ok");
          response.getWriter().close();
        }
        default -> throw new IllegalArgumentException(how);
      }
      response.setStatus(500);
      response.setHeader("Location", "/late");
    }
  }

  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, DIR);
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;
  @Autowired
  JdbcTemplate jdbc;
  @Autowired
  Orders orders;

  @ParameterizedTest(name = "{0} mode, answer ended by {1}")
  @CsvSource({"lease, content-length", "lease, close", "tx, content-length", "tx, close",
      "lease, content-length-header", "tx, content-length-header", "lease, writer-content-length",
      "tx, writer-content-length", "lease, writer-close", "tx, writer-close",
      "lease, content-length-then-write", "tx, content-length-then-write"})
  void changesAfterTomcatEndedTheAnswerAreNotTheGuardsAnswer(String mode, String how) throws Exception {
    String item = mode + "-" + how;
    HttpResponse<String> container = HTTP.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/unguarded/unguarded-" + item + "/" + how))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/" + mode + "/" + item + "/" + how))
        .header("Idempotency-Key", "k-" + item).POST(HttpRequest.BodyPublishers.noBody()).build();

    HttpResponse<String> first = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> retried = HTTP.send(request, HttpResponse.BodyHandlers.ofString());

    assertEquals(201, container.statusCode(), "Tomcat ignores the status set after the answer ended");
    assertEquals(1, orders.runs.get(item).get(), "the handler ran once");
    assertEquals(1, jdbc.queryForObject("SELECT COUNT(*) FROM orders WHERE item = ?", Integer.class, item));
    assertEquals(java.util.Optional.of("true"), retried.headers().firstValue("Idempotent-Replayed"));
    for (HttpResponse<String> r : List.of(first, retried)) {
      String which = r == first ? "the first guarded answer" : "the replay";
      assertEquals(container.statusCode(), r.statusCode(), which + " is " + r.statusCode() + ", while the handler"
          + " answers " + container.statusCode() + " without the guard: a setStatus after Tomcat ended the answer");
      assertEquals(container.headers().firstValue("Location"), r.headers().firstValue("Location"),
          which + ": a header set after Tomcat ended the answer");
      assertEquals(container.body(), r.body(), which + ": body");
    }
  }
}
