package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.RawHttp;
import dev.idem.server.AdapterContract;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.support.OrderApp;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The Servlet filter in a real Jetty 12 (ee10) on a loopback port 0. */
class ServletFilterTest extends AdapterContract {
  private Server server;

  @Override
  protected URI start(IdempotencyGuard guard) throws Exception {
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new AppServlet(app)), "/*");
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard, r -> r.getHeader("X-Caller"))), "/*",
        EnumSet.of(DispatcherType.REQUEST));
    server.setHandler(context);
    server.start();
    return URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
  }

  @Override
  protected void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
  }

  @Test
  void writerBodiesAndSendErrorAreCapturedToo() throws Exception {
    startDefault();
    var first = post("/orders", "k-w", null, "writer", "{}");
    var again = post("/orders", "k-w", null, "writer", "{}");
    var declined = post("/orders", "k-e", null, "error402", "{}");
    var declinedAgain = post("/orders", "k-e", null, "error402", "{}");

    assertEquals(200, first.statusCode());
    assertEquals("written é 1", first.body());
    assertEquals(first.body(), again.body());
    assertEquals("true", replayed(again).orElse(null));
    assertEquals(402, declined.statusCode());
    assertEquals(402, declinedAgain.statusCode());
    assertEquals("true", replayed(declinedAgain).orElse(null));
    assertEquals(1, app.effects("k-w"));
    assertEquals(1, app.effects("k-e"));
  }

  /**
   * Review: {@code sendRedirect} and {@code sendError} end the answer. The container drops what is
   * written after them (Tomcat suspends the response), and {@code sendError} drops what was written
   * before too; the filter kept both in the answer it sent and stored, so the first client and
   * every retry got a body the same servlet never sends without the guard.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"redirect-then-write", "stream-redirect-then-write", "error-then-write",
      "error-msg-then-write", "stream-error-then-write"})
  void whatIsWrittenAroundSendRedirectOrSendErrorIsNotTheAnswer(String mode) throws Exception {
    startDefault();
    String key = "k-" + mode;

    var first = post("/orders", key, null, mode, "{}");
    var again = post("/orders", key, null, mode, "{}");

    boolean redirect = mode.contains("redirect");
    assertEquals(redirect ? 302 : 402, first.statusCode());
    assertEquals("", first.body(), "the container drops the body written after (and for sendError, before) it");
    assertEquals(redirect ? Optional.of("/orders/done") : Optional.empty(), location(first));
    assertEquals(first.statusCode(), again.statusCode());
    assertEquals(first.body(), again.body(), "the retry is replayed what the first client got");
    assertEquals(location(first), location(again));
    assertEquals("true", replayed(again).orElse(null));
    assertEquals(1, app.effects(key), "the handler ran once");
  }

  /**
   * Review: once {@code sendRedirect} or {@code sendError} ended the answer, the container ignores
   * the handler's later status, header and content type changes (the response is committed;
   * Tomcat's facade drops them). The filter passed them on to the answer it sent and stored, so a
   * handler that sends 404 then sets 200, or redirects then adds a header, got an answer it never
   * gets without the guard, and every retry was replayed that answer.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"error-then-status", "redirect-then-header", "error-then-content-type"})
  void changesAfterSendRedirectOrSendErrorAreNotTheAnswer(String mode) throws Exception {
    startDefault();
    String key = "k-" + mode;

    var first = post("/orders", key, null, mode, "{}");
    var again = post("/orders", key, null, mode, "{}");

    int status = switch (mode) {
      case "error-then-status" -> 404;
      case "redirect-then-header" -> 302;
      default -> 402;
    };
    assertEquals(status, first.statusCode(), "the status sendRedirect or sendError sent");
    assertEquals(status, again.statusCode(), "the retry is replayed what the first client got");
    for (var r : java.util.List.of(first, again)) {
      assertEquals(Optional.empty(), r.headers().firstValue("X-Late"), "a header set after the answer ended");
      assertEquals(Optional.empty(), r.headers().firstValue("X-Late-Int"));
      assertEquals(Optional.empty(), r.headers().firstValue("X-Late-Date"));
      assertEquals(Optional.empty(), r.headers().firstValue("Content-Language"));
      assertFalse(r.headers().allValues("Set-Cookie").stream().anyMatch(c -> c.startsWith("late=")),
          r.headers().allValues("Set-Cookie").toString());
      assertFalse(r.headers().firstValue("Content-Type").orElse("").contains("json"),
          "a content type set after the answer ended: " + r.headers().firstValue("Content-Type"));
      assertEquals(mode.contains("redirect") ? Optional.of("/orders/done") : Optional.empty(), location(r));
      assertEquals("", r.body());
    }
    assertEquals(first.headers().firstValue("Content-Type"), again.headers().firstValue("Content-Type"));
    assertEquals("true", replayed(again).orElse(null));
    assertEquals(1, app.effects(key), "the handler ran once");
  }

  private static Optional<String> location(java.net.http.HttpResponse<?> r) {
    return r.headers().firstValue("Location").map(l -> URI.create(l).getPath());
  }

  /**
   * CI on 0c649e2: a refusal (here, no key) answered before the request's body had arrived left the
   * body unread on a connection the response did not close. Jetty closed it after the response; the
   * client, told nothing, sent its next request on it and got no bytes back.
   */
  @Test
  void aRefusalAnsweredBeforeTheBodyArrivedTellsTheClientTheConnectionCloses() throws Exception {
    startDefault();
    try (Socket socket = new Socket(base.getHost(), base.getPort())) {
      socket.setSoTimeout(10_000);
      String head = RawHttp.exchange(socket, "POST /orders HTTP/1.1\r\nHost: localhost\r\n"
          + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n");

      assertTrue(head.startsWith("HTTP/1.1 400 "), head);
      assertTrue(RawHttp.closes(head), head);
    }
    assertEquals(0, app.totalEffects());
  }

  /**
   * Answers whose body the guard read (an effect, a key reused with another body) keep the
   * connection; a refusal whose body came with it keeps it too, or says that it closes.
   */
  @Test
  void answersOnOneConnectionKeepItOrSayTheyCloseIt() throws Exception {
    startDefault();
    try (Socket socket = new Socket(base.getHost(), base.getPort())) {
      socket.setSoTimeout(10_000);

      assertTrue(post(socket, "k-c", "{\"a\":1}").startsWith("HTTP/1.1 201 "));
      String reused = post(socket, "k-c", "{\"a\":2}");
      assertTrue(reused.startsWith("HTTP/1.1 422 "), reused);
      assertFalse(RawHttp.closes(reused), reused);
      String replay = post(socket, "k-c", "{\"a\":1}");
      assertTrue(replay.startsWith("HTTP/1.1 201 ")
          && replay.contains("\r\n" + IdempotencyGuard.REPLAYED_HEADER + ": true\r\n"), replay);
      assertFalse(RawHttp.closes(replay), replay);
      String noKey = post(socket, null, "{}");
      assertTrue(noKey.startsWith("HTTP/1.1 400 "), noKey);
      if (!RawHttp.closes(noKey)) {
        assertTrue(post(socket, null, "{}").startsWith("HTTP/1.1 400 "), "the kept connection answers");
      }
    }
    assertEquals(1, app.effects("k-c"));
    assertEquals(1, app.totalEffects());
  }

  private static String post(Socket socket, String key, String body) throws IOException {
    return RawHttp.exchange(socket, "POST /orders HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        + (key == null ? "" : "Idempotency-Key: " + key + "\r\n")
        + "Content-Length: " + body.length() + "\r\n\r\n" + body);
  }

  static final class AppServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient OrderApp app;

    AppServlet(OrderApp app) {
      this.app = app;
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      String key = req.getHeader("Idempotency-Key");
      String mode = req.getHeader("X-Mode");
      byte[] body = req.getInputStream().readAllBytes();
      OrderApp.Answer a;
      try {
        a = app.handle(key, mode, body);
      } catch (InterruptedException e) {
        throw new IOException(e);
      }
      if ("writer".equals(mode)) {
        resp.setContentType("text/plain; charset=utf-8");
        resp.getWriter().print("written é " + app.effects(key));
        return;
      }
      if (mode != null && mode.endsWith("-then-write")) {
        answerThenWrite(mode, resp);
        return;
      }
      if ("error-then-status".equals(mode) || "redirect-then-header".equals(mode)
          || "error-then-content-type".equals(mode)) {
        answerThenChange(mode, resp);
        return;
      }
      if ("error402".equals(mode)) {
        resp.sendError(402, "declined");
        return;
      }
      resp.setStatus(a.status());
      resp.setContentType(a.contentType());
      if (a.location() != null) {
        resp.setHeader("Location", a.location());
      }
      resp.setHeader("Set-Cookie", "session=never-stored");
      resp.getOutputStream().write(a.body());
    }

    /** A draft body, then the answer that ends it ({@code sendRedirect} or {@code sendError}), then more body. */
    private static void answerThenWrite(String mode, HttpServletResponse resp) throws IOException {
      resp.setContentType("text/plain");
      boolean stream = mode.startsWith("stream-");
      write(resp, stream, "draft");
      switch (mode.substring(stream ? "stream-".length() : 0)) {
        case "redirect-then-write" -> resp.sendRedirect("/orders/done");
        case "error-then-write" -> resp.sendError(402);
        case "error-msg-then-write" -> resp.sendError(402, "declined");
        default -> throw new IllegalArgumentException(mode);
      }
      write(resp, stream, "written after the answer was sent");
    }

    /** The answer that ends it ({@code sendRedirect} or {@code sendError}), then changes to its status or headers. */
    private static void answerThenChange(String mode, HttpServletResponse resp) throws IOException {
      resp.setContentType("text/plain");
      switch (mode) {
        case "error-then-status" -> {
          resp.sendError(404);
          resp.setStatus(200);
        }
        case "redirect-then-header" -> {
          resp.sendRedirect("/orders/done");
          resp.setHeader("Location", "/orders/elsewhere");
          resp.setHeader("X-Late", "1");
          resp.addHeader("X-Late", "2");
          resp.setIntHeader("X-Late-Int", 3);
          resp.setDateHeader("X-Late-Date", 0L);
          resp.addCookie(new jakarta.servlet.http.Cookie("late", "1"));
          resp.setLocale(java.util.Locale.FRANCE);
          resp.setStatus(200);
        }
        case "error-then-content-type" -> {
          resp.sendError(402);
          resp.setContentType("application/json");
          resp.setCharacterEncoding("UTF-16");
          resp.setContentLength(5);
        }
        default -> throw new IllegalArgumentException(mode);
      }
    }

    private static void write(HttpServletResponse resp, boolean stream, String text) throws IOException {
      if (stream) {
        resp.getOutputStream().write(text.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
      } else {
        resp.getWriter().write(text);
      }
    }
  }
}
