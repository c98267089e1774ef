package dev.idem.spring.boot.redirect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.RecordQuery;
import dev.idem.server.RecordSummary;
import dev.idem.server.spi.StoredResponse;
import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.ServletResponseWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
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
 * Review (servlet61): Servlet 6.1 (Tomcat 11, Boot 4) added {@code sendRedirect(location, sc,
 * clearBuffer)} and the defaults {@code sendRedirect(location, sc)} and {@code sendRedirect(location,
 * clearBuffer)}, which {@code HttpServletResponseWrapper} sends straight to the container's
 * response; the guard's wrappers held back only {@code sendRedirect(location)}. In transactional
 * mode a handler's {@code sendRedirect("/x", 303)} reached the container before the transaction
 * committed, and the guard stored 200. In lease mode the container suspended the response, so the
 * body the guard held never reached the first client (an empty body, or, with {@code clearBuffer}
 * false, not the body the handler wrote) while that held body was stored and replayed to every
 * retry: the first answer and the replays differ. A redirect, in any spelling, is now held and
 * stored like any answer: its status, its {@code Location}, and the body written before it unless
 * the buffer is cleared (as the container does, and as {@code sendRedirect(location)} means), sent
 * only once stored (and committed).
 *
 * <p>These sources compile against Servlet 6.0 (Boot 3.5) too, so the 6.1 overloads are called by
 * reflection; under Boot 3.5 only the 6.0 spelling runs.
 */
@SpringBootTest(classes = RedirectOverloadsReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.server.store=datasource",
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class RedirectOverloadsReviewTest {
  static final Path DIR = AppDatabase.withOrders("idem-redirect-");
  static final String DRAFT = "draft before the redirect";
  static final String AFTER = "written after the answer was sent";


  @SpringBootApplication
  @Import(Orders.class)
  static class App {}

  /** What the container's own response held when a handler had just redirected. */
  record Seen(int status, String location) {}

  @RestController
  static class Orders {
    private final JdbcTemplate jdbc;
    /** Handler runs per item. */
    final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    /** The container's response right after the handler's redirect, per item. */
    final Map<String, Seen> container = new ConcurrentHashMap<>();

    Orders(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PostMapping("/lease/{item}/{how}")
    @Idempotent
    void lease(@PathVariable String item, @PathVariable String how, HttpServletResponse response) throws Throwable {
      answer(item, how, response);
    }

    @PostMapping("/tx/{item}/{how}")
    @Idempotent(transactional = true)
    void tx(@PathVariable String item, @PathVariable String how, HttpServletResponse response) throws Throwable {
      answer(item, how, response);
    }

    @PostMapping("/lease/{item}/{how}/then-write")
    @Idempotent
    void leaseThenWrite(@PathVariable String item, @PathVariable String how, HttpServletResponse response)
        throws Throwable {
      answer(item, how, response);
      response.getWriter().write(AFTER);
    }

    @PostMapping("/tx/{item}/{how}/then-write")
    @Idempotent(transactional = true)
    void txThenWrite(@PathVariable String item, @PathVariable String how, HttpServletResponse response)
        throws Throwable {
      answer(item, how, response);
      response.getWriter().write(AFTER);
    }

    /** The same handler without the guard: what the container itself sends for it. */
    @PostMapping("/unguarded/{item}/{how}/then-write")
    void unguardedThenWrite(@PathVariable String item, @PathVariable String how, HttpServletResponse response)
        throws Throwable {
      answer(item, how, response);
      response.getWriter().write(AFTER);
    }

    @PostMapping("/lease-error/{item}/{how}")
    @Idempotent
    void leaseError(@PathVariable String item, @PathVariable String how, HttpServletResponse response)
        throws IOException {
      error(item, how, response);
    }

    @PostMapping("/tx-error/{item}/{how}")
    @Idempotent(transactional = true)
    void txError(@PathVariable String item, @PathVariable String how, HttpServletResponse response)
        throws IOException {
      error(item, how, response);
    }

    @PostMapping("/lease-late/{item}/{how}")
    @Idempotent
    void leaseLate(@PathVariable String item, @PathVariable String how, HttpServletResponse response)
        throws IOException {
      answerThenChange(item, how, response);
    }

    @PostMapping("/tx-late/{item}/{how}")
    @Idempotent(transactional = true)
    void txLate(@PathVariable String item, @PathVariable String how, HttpServletResponse response)
        throws IOException {
      answerThenChange(item, how, response);
    }

    /** The same handler without the guard: what Tomcat itself sends for it. */
    @PostMapping("/unguarded-late/{item}/{how}")
    void unguardedLate(@PathVariable String item, @PathVariable String how, HttpServletResponse response)
        throws IOException {
      answerThenChange(item, how, response);
    }

    /**
     * The effect, then the answer ({@code sendError} or {@code sendRedirect}), then changes to its
     * status and headers, which the container ignores once the answer ended.
     */
    private void answerThenChange(String item, String how, HttpServletResponse response) throws IOException {
      runs.computeIfAbsent(item, i -> new AtomicInteger()).incrementAndGet();
      jdbc.update("INSERT INTO orders(item) VALUES (?)", item);
      response.setContentType("text/plain");
      switch (how) {
        case "error-then-status" -> {
          response.sendError(404);
          response.setStatus(200);
        }
        case "redirect-then-header" -> {
          response.sendRedirect("/orders/" + item);
          response.setHeader("Location", "/orders/elsewhere");
          response.setHeader("X-Late", "1");
          response.addHeader("X-Late", "2");
          response.setIntHeader("X-Late-Int", 3);
          response.setDateHeader("X-Late-Date", 0L);
          response.addCookie(new jakarta.servlet.http.Cookie("late", "1"));
          response.setStatus(200);
        }
        case "error-then-content-type" -> {
          response.sendError(402);
          response.setContentType("application/json");
          response.setCharacterEncoding("UTF-16");
          if (servlet61Present()) {
            setCharset61(response, StandardCharsets.UTF_16LE);
          }
        }
        default -> throw new IllegalArgumentException(how);
      }
    }

    /** The effect, a draft body, {@code sendError} (with a message or not), then more body. */
    private void error(String item, String how, HttpServletResponse response) throws IOException {
      runs.computeIfAbsent(item, i -> new AtomicInteger()).incrementAndGet();
      jdbc.update("INSERT INTO orders(item) VALUES (?)", item);
      response.setContentType("text/plain");
      response.getWriter().write(DRAFT);
      if (how.equals("msg")) {
        response.sendError(402, "declined");
      } else {
        response.sendError(402);
      }
      response.getWriter().write(AFTER);
    }

    /** The effect, a draft body in the buffer, then the redirect spelled as {@code how} says. */
    private void answer(String item, String how, HttpServletResponse response) throws Throwable {
      runs.computeIfAbsent(item, i -> new AtomicInteger()).incrementAndGet();
      jdbc.update("INSERT INTO orders(item) VALUES (?)", item);
      response.setContentType("text/plain");
      response.getWriter().write(DRAFT);
      redirect(response, how, "/orders/" + item);
      HttpServletResponse inner = containerResponse(response);
      container.put(item, new Seen(inner.getStatus(), inner.getHeader("Location")));
    }
  }

  /** The spelling of each case: the overload, and what it answers. */
  static void redirect(HttpServletResponse response, String how, String location) throws Throwable {
    switch (how) {
      case "plain" -> response.sendRedirect(location);
      case "status" -> servlet61(response, MethodType.methodType(void.class, String.class, int.class))
          .invoke(response, location, 303);
      case "keep" -> servlet61(response, MethodType.methodType(void.class, String.class, boolean.class))
          .invoke(response, location, false);
      case "status-keep" -> servlet61(response, MethodType.methodType(void.class, String.class, int.class, boolean.class))
          .invoke(response, location, 307, false);
      case "status-clear" -> servlet61(response, MethodType.methodType(void.class, String.class, int.class, boolean.class))
          .invoke(response, location, 308, true);
      default -> throw new IllegalArgumentException(how);
    }
  }

  /** Servlet 6.1's {@code setCharacterEncoding(Charset)}, which the 6.0 wrapper sends straight to the container. */
  static void setCharset61(HttpServletResponse response, java.nio.charset.Charset charset) {
    try {
      MethodHandles.publicLookup().findVirtual(HttpServletResponse.class, "setCharacterEncoding",
              MethodType.methodType(void.class, java.nio.charset.Charset.class))
          .invoke(response, charset);
    } catch (Throwable e) {
      throw new AssertionError(e);
    }
  }

  private static java.lang.invoke.MethodHandle servlet61(HttpServletResponse response, MethodType type)
      throws ReflectiveOperationException {
    return MethodHandles.publicLookup().findVirtual(HttpServletResponse.class, "sendRedirect", type)
        .asType(type.insertParameterTypes(0, HttpServletResponse.class));
  }

  static boolean servlet61Present() {
    try {
      HttpServletResponse.class.getMethod("sendRedirect", String.class, int.class, boolean.class);
      return true;
    } catch (NoSuchMethodException e) {
      assertFalse(System.getProperty("idem.boot.version", "").startsWith("4."),
          "Boot 4 runs on Servlet 6.1 (Tomcat 11)");
      return false;
    }
  }

  private static HttpServletResponse containerResponse(ServletResponse response) {
    ServletResponse r = response;
    while (r instanceof ServletResponseWrapper w) {
      r = w.getResponse();
    }
    return (HttpServletResponse) r;
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
  @Autowired
  IdempotencyGuard guard;

  @ParameterizedTest(name = "{0} mode, sendRedirect {1}")
  @CsvSource({
      "lease, plain,        302, ''",
      "lease, status,       303, ''",
      "lease, keep,         302, " + DRAFT,
      "lease, status-keep,  307, " + DRAFT,
      "lease, status-clear, 308, ''",
      "tx,    plain,        302, ''",
      "tx,    status,       303, ''",
      "tx,    keep,         302, " + DRAFT,
      "tx,    status-keep,  307, " + DRAFT,
      "tx,    status-clear, 308, ''"})
  void theRedirectIsHeldStoredThenSentAndReplayed(String mode, String how, int status, String body) throws Exception {
    assumeTrue(how.equals("plain") || servlet61Present(), "Servlet 6.1 only");
    String item = mode + "-" + how;
    String location = "/orders/" + item;
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/" + mode + "/" + item + "/" + how))
        .header("Idempotency-Key", "k-" + item).POST(HttpRequest.BodyPublishers.noBody()).build();

    HttpResponse<String> first = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    assertEquals(status, first.statusCode(), "the client's first answer is the redirect");
    String sent = first.headers().firstValue("Location").orElse("");
    assertTrue(sent.endsWith(location), "the Location the handler gave, not " + sent);
    assertEquals(body, first.body());
    if (mode.equals("tx")) {
      assertEquals(new Seen(200, null), orders.container.get(item),
          "nothing reaches the container's response before the transaction commits");
    }
    assertEquals(1, rows(item));

    StoredResponse stored = stored("k-" + item);
    assertEquals(status, stored.status(), "the guard stores the redirect");
    assertEquals(List.of(sent), header(stored, "Location"));
    assertArrayEquals(body.getBytes(StandardCharsets.ISO_8859_1), stored.body());

    HttpResponse<String> retried = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    assertEquals(status, retried.statusCode(), "the retry is replayed the redirect");
    assertEquals(Optional.of(sent), retried.headers().firstValue("Location"));
    assertEquals(Optional.of("true"), retried.headers().firstValue("Idempotent-Replayed"));
    assertEquals(body, retried.body());
    assertEquals(1, orders.runs.get(item).get(), "the handler ran once");
    assertEquals(1, rows(item));
  }

  /**
   * Review: a handler that writes after its redirect. The container commits the response at
   * {@code sendRedirect} (Tomcat suspends it) and drops what is written after; the guard's wrappers
   * kept it, so the client got, and every retry was replayed, a body the same handler never sends
   * without the guard.
   */
  @ParameterizedTest(name = "{0} mode, sendRedirect {1}, then a write")
  @CsvSource({
      "lease, plain", "lease, status", "lease, keep", "lease, status-keep", "lease, status-clear",
      "tx,    plain", "tx,    status", "tx,    keep", "tx,    status-keep", "tx,    status-clear"})
  void aWriteAfterTheRedirectIsDroppedAsTheContainerDropsIt(String mode, String how) throws Exception {
    assumeTrue(how.equals("plain") || servlet61Present(), "Servlet 6.1 only");
    String item = mode + "-" + how + "-then-write";
    HttpResponse<String> container = HTTP.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/unguarded/unguarded-" + item + "/" + how + "/then-write"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    HttpRequest request = HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/" + mode + "/" + item + "/" + how + "/then-write"))
        .header("Idempotency-Key", "k-" + item).POST(HttpRequest.BodyPublishers.noBody()).build();

    HttpResponse<String> first = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> retried = HTTP.send(request, HttpResponse.BodyHandlers.ofString());

    assertEquals(container.statusCode(), first.statusCode());
    assertEquals(container.body(), first.body(), "the first client gets what the container sends without the guard");
    assertEquals(location(container).replace("unguarded-", ""), location(first));
    assertEquals(first.statusCode(), retried.statusCode());
    assertEquals(location(first), location(retried));
    assertEquals(first.body(), retried.body(), "the retry is replayed what the first client got");
    assertEquals(Optional.of("true"), retried.headers().firstValue("Idempotent-Replayed"));
    assertEquals(1, orders.runs.get(item).get(), "the handler ran once");
    assertEquals(1, rows(item));
  }

  /**
   * Review: {@code sendError} ends the answer. The container drops the body written before it
   * (and after it); the guard's wrappers, which hold it as a status without a container error page,
   * kept both, so the first client got, and every retry was replayed, a half-written body with the
   * error status.
   */
  @ParameterizedTest(name = "{0} mode, sendError {1}")
  @CsvSource({"lease, sc", "lease, msg", "tx, sc", "tx, msg"})
  void sendErrorIsStoredAsItsStatusWithoutTheBodyWrittenAroundIt(String mode, String how) throws Exception {
    String item = mode + "-error-" + how;
    HttpRequest request = HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/" + mode + "-error/" + item + "/" + how))
        .header("Idempotency-Key", "k-" + item).POST(HttpRequest.BodyPublishers.noBody()).build();

    HttpResponse<String> first = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> retried = HTTP.send(request, HttpResponse.BodyHandlers.ofString());

    assertEquals(402, first.statusCode());
    assertEquals("", first.body(), "the body written around sendError is not the answer");
    StoredResponse stored = stored("k-" + item);
    assertEquals(402, stored.status());
    assertArrayEquals(new byte[0], stored.body());
    assertEquals(402, retried.statusCode());
    assertEquals(first.body(), retried.body(), "the retry is replayed what the first client got");
    assertEquals(Optional.of("true"), retried.headers().firstValue("Idempotent-Replayed"));
    assertEquals(1, orders.runs.get(item).get(), "the handler ran once");
    assertEquals(1, rows(item));
  }

  /**
   * Review: once {@code sendRedirect} or {@code sendError} ended the answer, Tomcat ignores the
   * handler's later status and header changes (its response facade reads as committed). The
   * guard's wrappers took them into the answer they stored (and, in lease mode, passed them to the
   * container's response), so a handler that sends 404 then sets 200, or redirects then sets a
   * header or a content type, was answered, and every retry replayed, what the same handler never
   * answers without the guard.
   */
  @ParameterizedTest(name = "{0} mode, {1}")
  @CsvSource({
      "lease, error-then-status, 404", "lease, redirect-then-header, 302", "lease, error-then-content-type, 402",
      "tx,    error-then-status, 404", "tx,    redirect-then-header, 302", "tx,    error-then-content-type, 402"})
  void changesAfterTheAnswerEndedAreIgnoredAsTheContainerIgnoresThem(String mode, String how, int status)
      throws Exception {
    String item = mode + "-late-" + how;
    HttpResponse<String> container = HTTP.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/unguarded-late/unguarded-" + item + "/" + how))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    HttpRequest request = HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/" + mode + "-late/" + item + "/" + how))
        .header("Idempotency-Key", "k-" + item).POST(HttpRequest.BodyPublishers.noBody()).build();

    HttpResponse<String> first = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> retried = HTTP.send(request, HttpResponse.BodyHandlers.ofString());

    if (how.contains("redirect")) {
      // (Without the guard a sendError is answered by Boot's error page, not by the handler.)
      assertEquals(status, container.statusCode(), "Tomcat keeps the status sendRedirect set");
      assertEquals(Optional.empty(), container.headers().firstValue("X-Late"), "and ignores later headers");
      assertEquals("/orders/unguarded-" + item, location(container), "and the Location sendRedirect set");
    }
    assertEquals(status, first.statusCode(), "the first client gets the status the container sends");
    StoredResponse stored = stored("k-" + item);
    assertEquals(status, stored.status(), "the guard stores the answer the first client got");
    for (String late : List.of("X-Late", "X-Late-Int", "X-Late-Date")) {
      assertEquals(List.of(), header(stored, late), late + " was set after the answer ended");
    }
    assertFalse(header(stored, "Set-Cookie").stream().anyMatch(c -> c.startsWith("late=")), stored.headers().toString());
    assertFalse(String.join(",", header(stored, "Content-Type")).contains("json"), stored.headers().toString());
    assertFalse(String.join(",", header(stored, "Content-Type")).toUpperCase(java.util.Locale.ROOT).contains("UTF-16"),
        "a charset set after the answer ended (on Servlet 6.1 also as a Charset): " + stored.headers());
    assertEquals(how.contains("redirect") ? List.of(first.headers().firstValue("Location").orElseThrow()) : List.of(),
        header(stored, "Location"));
    if (how.contains("redirect")) {
      assertEquals("/orders/" + item, location(first), "the Location sendRedirect set");
    }
    for (HttpResponse<String> r : List.of(first, retried)) {
      assertEquals(Optional.empty(), r.headers().firstValue("X-Late"));
      assertEquals(Optional.empty(), r.headers().firstValue("X-Late-Int"));
      assertEquals(Optional.empty(), r.headers().firstValue("X-Late-Date"));
      assertFalse(r.headers().firstValue("Content-Type").orElse("").contains("json"), r.headers().map().toString());
      assertFalse(r.headers().firstValue("Content-Type").orElse("").toUpperCase(java.util.Locale.ROOT).contains("UTF-16"),
          r.headers().map().toString());
    }
    assertEquals(first.statusCode(), retried.statusCode(), "the retry is replayed what the first client got");
    assertEquals(location(first), location(retried));
    assertEquals(first.headers().firstValue("Content-Type"), retried.headers().firstValue("Content-Type"));
    assertEquals(first.body(), retried.body());
    assertEquals(Optional.of("true"), retried.headers().firstValue("Idempotent-Replayed"));
    assertEquals(1, orders.runs.get(item).get(), "the handler ran once");
    assertEquals(1, rows(item));
  }

  /** The path of a response's {@code Location} (the container may make it absolute), or "". */
  private static String location(HttpResponse<?> response) {
    return response.headers().firstValue("Location").map(l -> URI.create(l).getPath()).orElse("");
  }

  private StoredResponse stored(String key) {
    RecordSummary r = guard.records(RecordQuery.all()).records().stream().filter(s -> s.id().key().equals(key))
        .findFirst().orElseThrow(() -> new AssertionError("no record for " + key));
    return guard.store().find(r.id()).orElseThrow().response()
        .orElseThrow(() -> new AssertionError("no stored answer for " + key + ": " + r));
  }

  private static List<String> header(StoredResponse stored, String name) {
    return stored.headers().entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name))
        .map(Map.Entry::getValue).findFirst().orElse(List.of());
  }

  private int rows(String item) {
    return jdbc.queryForObject("SELECT COUNT(*) FROM orders WHERE item = ?", Integer.class, item);
  }
}
