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
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
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
 * Review of the declared-length end of the answer (commit 85c6d4db), against what Tomcat sends for
 * the same handler without the guard. Each case runs the handler unguarded, then in lease and in
 * transactional mode, once and once more with the same key: the guarded answer and its replay must
 * be what Tomcat sends.
 */
@SpringBootTest(classes = DeclaredLengthEdgesReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.server.store=datasource",
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class DeclaredLengthEdgesReviewTest {
  static final Path DIR = AppDatabase.withOrders("idem-declared-length-");

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

    private void answer(String item, String how, HttpServletResponse response) throws IOException {
      runs.computeIfAbsent(item, i -> new AtomicInteger()).incrementAndGet();
      jdbc.update("INSERT INTO orders(item) VALUES (?)", item);
      response.setStatus(201);
      response.setContentType("text/plain");
      switch (how) {
        case "length-after-more-body" -> {
          response.getOutputStream().write("okxyz".getBytes(StandardCharsets.US_ASCII));
          response.setContentLength(2); // smaller than what was written: Tomcat sends 2 bytes and ends here
        }
        case "length-header-after-more-body" -> {
          response.getOutputStream().write("okxyz".getBytes(StandardCharsets.US_ASCII));
          response.setHeader("Content-Length", "2");
        }
        case "length-then-null-header" -> {
          response.setContentLength(2);
          response.setHeader("Content-Length", null); // Tomcat 10.1 ignores it (2 stays); Tomcat 11 removes it
          response.getOutputStream().write("okxyz".getBytes(StandardCharsets.US_ASCII));
        }
        case "length-header-with-space" -> {
          response.setHeader("Content-Length", " 2"); // Tomcat's Long.parseLong refuses it: no length declared
          response.getOutputStream().write("ok".getBytes(StandardCharsets.US_ASCII));
        }
        case "flush-then-status" -> {
          response.getOutputStream().write("ok".getBytes(StandardCharsets.US_ASCII));
          response.flushBuffer(); // commits: Tomcat sends 201 and ignores the later status and header
        }
        case "writer-default-charset" -> {
          response.getWriter().print("caf\u00e9"); // Tomcat's writer adds ;charset=ISO-8859-1 to the Content-Type
          response.setStatus(201); // the status stays 201: the case is about the charset
          return;
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

  @org.junit.jupiter.params.ParameterizedTest(name = "{0} mode, {1}")
  @org.junit.jupiter.params.provider.CsvSource({"lease, length-after-more-body", "tx, length-after-more-body",
      "lease, length-header-after-more-body", "tx, length-header-after-more-body"})
  void bodyWrittenPastALengthDeclaredLaterIsNotSentStoredOrReplayed(String mode, String how) throws Exception {
    sameAsTomcat(mode, how);
  }

  /**
   * Tomcat 10.1 (Boot 3) ignores {@code setHeader("Content-Length", null)} and answers 201 'ok';
   * Tomcat 11 (Boot 4), Jetty and Servlet 6.1 remove the header, and the length with it, and answer
   * 500 'okxyz'. These sources run on both, so the test asserts the guard's one rule (the null value
   * forgets the length, docs/spring.md) rather than either Tomcat: the handler ran once, one row,
   * and the first answer and its replay are the same.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0} mode")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"lease", "tx"})
  void aNullContentLengthHeaderForgetsTheDeclaredLengthAsServlet61Says(String mode) throws Exception {
    List<HttpResponse<String>> answers = guarded(mode, "length-then-null-header");
    for (HttpResponse<String> r : answers) {
      String which = r == answers.get(0) ? "the first guarded answer" : "the replay";
      assertEquals("500 'okxyz' Location=/late", r.statusCode() + " '" + r.body() + "' Location="
          + r.headers().firstValue("Location").orElse("-"), which);
    }
  }

  @org.junit.jupiter.params.ParameterizedTest(name = "{0} mode")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"lease", "tx"})
  void aContentLengthHeaderTomcatCannotParseDeclaresNothing(String mode) throws Exception {
    sameAsTomcat(mode, "length-header-with-space");
  }

  /** Not from 85c6d4db: flushBuffer() commits Tomcat's status and headers, the guard takes later changes. */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0} mode")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"lease", "tx"})
  void aStatusSetAfterFlushBufferIsNotTheGuardedAnswer(String mode) throws Exception {
    sameAsTomcat(mode, "flush-then-status");
  }

  /**
   * Not from 85c6d4db: getWriter() without a charset makes Tomcat send {@code text/plain;charset=ISO-8859-1};
   * the guard's writer encodes ISO-8859-1 too but leaves the Content-Type without it, so a client that
   * defaults to UTF-8 (java.net.http) reads "caf\uFFFD", first and on every replay.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0} mode")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"lease", "tx"})
  void theWritersDefaultCharsetIsInTheGuardedContentType(String mode) throws Exception {
    sameAsTomcat(mode, "writer-default-charset");
    String item = mode + "-writer-default-charset";
    HttpResponse<String> retried = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/" + mode
        + "/" + item + "/writer-default-charset")).header("Idempotency-Key", "k-" + item)
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(Optional.of("text/plain;charset=ISO-8859-1"), retried.headers().firstValue("Content-Type"));
  }

  private void sameAsTomcat(String mode, String how) throws Exception {
    String item = mode + "-" + how;
    HttpResponse<String> container = HTTP.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/unguarded/unguarded-" + item + "/" + how))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    List<HttpResponse<String>> answers = guarded(mode, how);
    for (HttpResponse<String> r : answers) {
      String which = r == answers.get(0) ? "the first guarded answer" : "the replay";
      assertEquals(container.statusCode() + " '" + container.body() + "'", r.statusCode() + " '" + r.body() + "'",
          which + ": status and body, against what Tomcat sends without the guard");
      assertEquals(container.headers().firstValue("Location"), r.headers().firstValue("Location"),
          which + ": a header set after Tomcat ended the answer");
    }
  }

  /** The guarded answer and its replay; asserts the handler ran once, one row, and the replay is the first answer. */
  private List<HttpResponse<String>> guarded(String mode, String how) throws Exception {
    String item = mode + "-" + how;
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/" + mode + "/" + item + "/" + how))
        .header("Idempotency-Key", "k-" + item).POST(HttpRequest.BodyPublishers.noBody()).build();

    HttpResponse<String> first = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> retried = HTTP.send(request, HttpResponse.BodyHandlers.ofString());

    assertEquals(1, orders.runs.get(item).get(), "the handler ran once");
    assertEquals(1, jdbc.queryForObject("SELECT COUNT(*) FROM orders WHERE item = ?", Integer.class, item));
    assertEquals(Optional.of("true"), retried.headers().firstValue("Idempotent-Replayed"));
    assertEquals(first.statusCode() + " '" + first.body() + "' " + first.headers().firstValue("Location")
        + " " + first.headers().firstValue("Content-Type"), retried.statusCode() + " '" + retried.body() + "' "
        + retried.headers().firstValue("Location") + " " + retried.headers().firstValue("Content-Type"),
        "the replay is the first answer");
    return List.of(first, retried);
  }
}
