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
 * Review of 85c6d4db on Jetty (the container of this module's docs and tests): a length declared
 * ({@code setContentLength} or a {@code Content-Length} header) after the body it announces was
 * already written does not end Jetty's answer: Jetty 12 sends the later {@code setStatus(500)} and
 * header. Tomcat ends it there (201 'ok'), as the Servlet spec's closure of the response reads
 * ("the content declared has been written"), and cuts body written past it, where Jetty answers 500.
 * One guard cannot match both; it keeps Tomcat's rule on every container (docs/server.md, "A length
 * declared after its body"), so on Jetty this is the one place where the guarded answer differs from
 * the unguarded one. What must hold: the handler ran once, one record, and the first answer and its
 * replay are the same: 201 'ok' without the late header.
 *
 * <p>The same servlet runs under {@code /plain/} without the guard and under {@code /guarded/}
 * behind it, in one Jetty.
 */
class ReviewLengthDeclaredAfterBodyOnJettyTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private IdempotencyGuard guard;
  private PlainAndGuardedJetty jetty;
  private URI base;

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(store).replayHeaders(Set.of("Content-Type", "X-Late"))
        .build();
    jetty = PlainAndGuardedJetty.start(new LateLengthServlet(runs), guard);
    base = jetty.base;
  }

  @AfterEach
  void stop() throws Exception {
    jetty.close();
    guard.close();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"stream-then-content-length", "stream-then-content-length-header",
      "writer-then-content-length-header"})
  void aLengthDeclaredAfterItsBodyEndsTheGuardedAnswerAsTomcatEndsIt(String mode) throws Exception {
    HttpResponse<String> first = post("/guarded/orders", mode);
    HttpResponse<String> again = post("/guarded/orders", mode);

    assertEquals(1, runs.get("/guarded/orders" + mode).get(), "the guarded handler ran once");
    assertEquals(1, store.size(), "one record");
    assertEquals("true", again.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null));
    assertEquals(first.statusCode() + " '" + first.body() + "' X-Late=" + first.headers().firstValue("X-Late")
        .orElse("-"), again.statusCode() + " '" + again.body() + "' X-Late=" + again.headers().firstValue("X-Late")
        .orElse("-"), "the replay is the first answer");
    assertEquals("201 'ok' X-Late=-", first.statusCode() + " '" + first.body() + "' X-Late="
        + first.headers().firstValue("X-Late").orElse("-"),
        "the guard's rule (Tomcat's): the declared length written ends the answer; Jetty alone would send 500");
  }

  private HttpResponse<String> post(String path, String mode) throws Exception {
    return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").header("Idempotency-Key", "k-" + mode).header("X-Mode", mode)
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Writes its whole body, then declares its length, then changes the status. */
  static final class LateLengthServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient Map<String, AtomicInteger> runs;

    LateLengthServlet(Map<String, AtomicInteger> runs) {
      this.runs = runs;
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      String mode = req.getHeader("X-Mode");
      runs.computeIfAbsent(req.getRequestURI() + mode, k -> new AtomicInteger()).incrementAndGet();
      req.getInputStream().readAllBytes();
      resp.setStatus(201);
      resp.setContentType("text/plain;charset=ISO-8859-1");
      switch (mode) {
        case "stream-then-content-length" -> {
          resp.getOutputStream().write("ok".getBytes(StandardCharsets.US_ASCII));
          resp.setContentLength(2);
        }
        case "stream-then-content-length-header" -> {
          resp.getOutputStream().write("ok".getBytes(StandardCharsets.US_ASCII));
          resp.setHeader("Content-Length", "2");
        }
        case "writer-then-content-length-header" -> {
          resp.getWriter().print("ok");
          resp.setHeader("Content-Length", "2");
        }
        default -> throw new IllegalArgumentException(mode);
      }
      resp.setStatus(500);
      resp.setHeader("X-Late", "1");
    }
  }
}
