package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test (found by review of the nested-dispatch fix).
 *
 * <p>A guarded servlet on Jetty 12 that wrote part of an answer (a draft, a progress line, an error
 * it then decided against) and then forwards to its view. A forward clears the response buffer
 * (Servlet spec 9.4: "the response buffer is cleared before the forward"), so without the guard the
 * client gets only the view's text. Jetty clears its own response ({@code resetForForward}), not the
 * filter's capturing wrapper, so the guard's held body keeps the pre-forward text: the client gets
 * {@code "draft...order 1"}, and that mix is stored and replayed to every retry. Tomcat calls
 * {@code resetBuffer()} on the wrapper and is not affected. Runs whether the filter is mapped for
 * FORWARD or not (the forward goes through the wrapper either way); mapped for all dispatcher types
 * here, as in {@code NestedDispatchThroughFilterTest}.
 */
class ForwardAfterPartialWriteOnJettyTest {
  private final HttpClient http = HttpClient.newHttpClient();
  private LoopbackJetty jetty;
  private IdempotencyGuard guard;
  private int port;

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).build();
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new Orders()), "/orders");
    context.addServlet(new ServletHolder(new View()), "/view");
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard)), "/*", EnumSet.allOf(DispatcherType.class));
    jetty = LoopbackJetty.start(context);
    port = jetty.port();
  }

  @AfterEach
  void stop() throws Exception {
    jetty.close();
    guard.close();
  }

  @Test
  void theForwardedViewsAnswerIsNotPrefixedWithWhatTheHandlerWroteBeforeTheForward() throws Exception {
    HttpResponse<String> unguarded = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
    assertEquals("order 1", unguarded.body(), "Jetty's own forward, without the guard (an unkeyed GET)");

    HttpResponse<String> first = post("k-draft");
    assertEquals(201, first.statusCode(), first.body());
    assertEquals("order 1", first.body(), "the buffer written before the forward must be cleared by it");

    HttpResponse<String> retry = post("k-draft");
    assertEquals("order 1", retry.body(), "replayed");
  }

  private HttpResponse<String> post(String key) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
        .header(IdempotencyGuard.DEFAULT_KEY_HEADER, key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"a\"}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static final class Orders extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
      resp.setContentType("text/plain");
      resp.getWriter().print("draft that the forward clears; ");
      req.setAttribute("order", 1);
      req.getRequestDispatcher("/view").forward(req, resp);
    }
  }

  private static final class View extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      resp.setStatus(201);
      resp.setContentType("text/plain");
      resp.getWriter().print("order " + req.getAttribute("order"));
    }
  }
}
