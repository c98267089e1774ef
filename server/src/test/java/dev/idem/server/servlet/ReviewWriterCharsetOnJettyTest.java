package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Review of 6dfa40c8 on Jetty: the guard's getWriter() now sets the charset it writes in on the
 * response. For a type whose charset Jetty only assumes (application/json: UTF-8, never named in
 * the header, RFC 8259 defines no charset parameter), Jetty's own getWriter() leaves the
 * Content-Type as the handler set it; the guarded answer and every replay now say
 * {@code application/json;charset=utf-8}. The same servlet runs unguarded under {@code /plain/} and
 * behind the guard under {@code /guarded/}, in one Jetty.
 */
class ReviewWriterCharsetOnJettyTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private IdempotencyGuard guard;
  private PlainAndGuardedJetty jetty;
  private URI base;

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(store).replayHeaders(Set.of("Content-Type")).build();
    jetty = PlainAndGuardedJetty.start(new WriterServlet(runs), guard);
    base = jetty.base;
  }

  @AfterEach
  void stop() throws Exception {
    jetty.close();
    guard.close();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"application/json", "text/plain", "text/html"})
  void theGuardedContentTypeIsJettys(String type) throws Exception {
    HttpResponse<byte[]> plain = post("/plain/orders", type, "k-plain");
    HttpResponse<byte[]> first = post("/guarded/orders", type, "k-" + type);
    HttpResponse<byte[]> again = post("/guarded/orders", type, "k-" + type);

    assertEquals(1, runs.get("/guarded/orders").get(), "the guarded handler ran once");
    assertEquals(1, store.size(), "one record");
    assertEquals("true", again.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null));
    for (HttpResponse<byte[]> r : new HttpResponse[] {first, again}) {
      assertEquals(describe(plain), describe(r), (r == first ? "the first guarded answer" : "the replay")
          + " against what Jetty sends without the guard");
    }
  }

  private static String describe(HttpResponse<byte[]> r) {
    return r.statusCode() + " Content-Type=" + r.headers().firstValue("Content-Type").orElse("-") + " body="
        + java.util.HexFormat.of().formatHex(r.body());
  }

  private HttpResponse<byte[]> post(String path, String type, String key) throws Exception {
    return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").header("Idempotency-Key", key).header("X-Type", type)
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  /** Sets a Content-Type without a charset and writes a name with an e-acute through getWriter(). */
  static final class WriterServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient Map<String, AtomicInteger> runs;

    WriterServlet(Map<String, AtomicInteger> runs) {
      this.runs = runs;
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      runs.computeIfAbsent(req.getRequestURI(), k -> new AtomicInteger()).incrementAndGet();
      req.getInputStream().readAllBytes();
      resp.setStatus(201);
      resp.setContentType(req.getHeader("X-Type"));
      resp.getWriter().print("{\"name\":\"caf\u00e9\"}");
    }
  }
}
