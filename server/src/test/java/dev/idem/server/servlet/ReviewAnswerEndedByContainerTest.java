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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Review: the guard now treats {@code sendError}/{@code sendRedirect} as the end of the answer, "as the
 * container ends it", and drops later status and header changes. The Servlet spec (5.7, closure of
 * the response) names other ends too: the amount of content given to {@code setContentLength} was
 * written, and the output stream was closed (which commits and completes the response). There the
 * container (Jetty here, Tomcat alike) ignores later status and header changes and later body, but the
 * guard's capture does not see the end: the changes reach the answer it sends, stores and replays.
 *
 * <p>The same servlet runs twice in one Jetty: under {@code /plain/} without the guard (what the
 * handler answers), under {@code /guarded/} behind it. The guarded answer, and its replay, must be
 * what the handler answers without the guard.
 */
class ReviewAnswerEndedByContainerTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private IdempotencyGuard guard;
  private PlainAndGuardedJetty jetty;
  private URI base;

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).replayHeaders(
        java.util.Set.of("Content-Type", "X-Late")).build();
    jetty = PlainAndGuardedJetty.start(new EndingServlet(runs), guard);
    base = jetty.base;
  }

  @AfterEach
  void stop() throws Exception {
    jetty.close();
    guard.close();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"content-length-then-status", "content-length-then-write", "close-then-status",
      "content-length-header-then-status", "writer-content-length-then-status", "writer-close-then-status"})
  void changesAfterTheContainerEndedTheAnswerAreNotTheGuardedAnswer(String mode) throws Exception {
    HttpResponse<String> plain = post("/plain/orders", "k-" + mode, mode);
    HttpResponse<String> first = post("/guarded/orders", "k-" + mode, mode);
    HttpResponse<String> again = post("/guarded/orders", "k-" + mode, mode);

    assertEquals(1, runs.get("/guarded/orders" + mode).get(), "the guarded handler ran once");
    assertEquals("true", again.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null));
    for (HttpResponse<String> guarded : java.util.List.of(first, again)) {
      String which = guarded == first ? "the first guarded answer" : "the replay";
      assertEquals(plain.statusCode(), guarded.statusCode(),
          which + ": status " + guarded.statusCode() + ", while without the guard the client gets "
              + plain.statusCode() + " (the container ended the answer before the later setStatus)");
      assertEquals(plain.headers().firstValue("X-Late"), guarded.headers().firstValue("X-Late"),
          which + ": a header set after the container ended the answer");
      assertEquals(plain.body(), guarded.body(), which + ": body");
    }
  }

  private HttpResponse<String> post(String path, String key, String mode) throws Exception {
    return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").header("Idempotency-Key", key).header("X-Mode", mode)
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Ends its answer as the Servlet spec lets a handler end it, then keeps changing the response. */
  static final class EndingServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient Map<String, AtomicInteger> runs;

    EndingServlet(Map<String, AtomicInteger> runs) {
      this.runs = runs;
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      String mode = req.getHeader("X-Mode");
      runs.computeIfAbsent(req.getRequestURI() + mode, k -> new AtomicInteger()).incrementAndGet();
      req.getInputStream().readAllBytes();
      byte[] ok = "ok".getBytes(StandardCharsets.US_ASCII);
      resp.setStatus(201);
      resp.setContentType("text/plain");
      switch (mode) {
        case "content-length-then-status" -> {
          resp.setContentLength(ok.length);
          resp.getOutputStream().write(ok); // the whole declared content: the container ends the answer here
          resp.setStatus(500);
          resp.setHeader("X-Late", "1");
        }
        case "content-length-then-write" -> {
          resp.setContentLength(ok.length);
          resp.getOutputStream().write(ok);
          try {
            resp.getOutputStream().write(" and more".getBytes(StandardCharsets.US_ASCII));
          } catch (IOException containerRefused) {
            // Jetty refuses content past the declared length; the handler carries on.
          }
        }
        case "close-then-status" -> {
          resp.getOutputStream().write(ok);
          resp.getOutputStream().close(); // commits and completes the response
          resp.setStatus(500);
          resp.setHeader("X-Late", "1");
        }
        case "content-length-header-then-status" -> {
          resp.setIntHeader("Content-Length", ok.length); // the containers take it as setContentLength
          resp.getOutputStream().write(ok);
          resp.setStatus(500);
          resp.setHeader("X-Late", "1");
        }
        case "writer-content-length-then-status" -> {
          resp.setContentLength(ok.length);
          resp.getWriter().print("ok"); // not flushed: the container counts the text as it is written
          resp.setStatus(500);
          resp.setHeader("X-Late", "1");
        }
        case "writer-close-then-status" -> {
          resp.getWriter().print("ok");
          resp.getWriter().close();
          resp.setStatus(500);
          resp.setHeader("X-Late", "1");
        }
        default -> throw new IllegalArgumentException(mode);
      }
    }
  }
}
