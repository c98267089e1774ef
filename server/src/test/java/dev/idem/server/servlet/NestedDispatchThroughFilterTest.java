package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

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
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.ErrorPageErrorHandler;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test: the filter mapped for every dispatcher type ({@code "/*"} with FORWARD, INCLUDE
 * and ERROR too, as a catch-all web.xml mapping does) admitted the nested dispatches of a request
 * it had already admitted. A guarded servlet that forwards to its view (or includes a fragment) saw
 * that dispatch find its own key in flight and answer 409 inside its own response; a handler that
 * threw had its claim released, then the container's ERROR dispatch to the error page claimed the
 * key again and the error page ran as the operation. Now a dispatch nested in one the filter
 * admitted passes through: the guard's work is the outer dispatch's.
 */
class NestedDispatchThroughFilterTest {
  private final AtomicInteger effects = new AtomicInteger();
  private final AtomicInteger failures = new AtomicInteger();
  private final HttpClient http = HttpClient.newHttpClient();
  private LoopbackJetty jetty;
  private IdempotencyGuard guard;
  private int port;

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).build();
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new Orders()), "/orders/*");
    context.addServlet(new ServletHolder(new View()), "/view");
    context.addServlet(new ServletHolder(new ErrorPage()), "/error");
    ErrorPageErrorHandler errors = new ErrorPageErrorHandler();
    errors.addErrorPage(500, "/error");
    errors.addErrorPage(Throwable.class, "/error");
    context.setErrorHandler(errors);
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
  void aForwardToTheViewIsTheAdmittedRequestsOwnAnswer() throws Exception {
    HttpResponse<String> first = post("/orders/forward", "k-forward");
    HttpResponse<String> retry = post("/orders/forward", "k-forward");

    assertEquals(201, first.statusCode(), first.body());
    assertEquals("order 1", first.body());
    assertEquals(201, retry.statusCode(), retry.body());
    assertEquals("order 1", retry.body());
    assertEquals("true", retry.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null));
    assertEquals(1, effects.get(), "one effect for the key");
  }

  @Test
  void anIncludedFragmentIsPartOfTheAdmittedRequestsAnswer() throws Exception {
    HttpResponse<String> first = post("/orders/include", "k-include");
    HttpResponse<String> retry = post("/orders/include", "k-include");

    assertEquals(201, first.statusCode(), first.body());
    assertEquals("order 1", first.body());
    assertEquals("order 1", retry.body());
    assertEquals(1, effects.get(), "one effect for the key");
  }

  @Test
  void theErrorPageOfAHandlerThatThrewIsNotTheOperation() throws Exception {
    HttpResponse<String> first = post("/orders/throw", "k-throw");
    assertEquals(500, first.statusCode(), first.body());
    assertEquals("error page", first.body());
    assertNull(first.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null));

    HttpResponse<String> retry = post("/orders/throw", "k-throw");
    assertNull(retry.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null),
        "the error page's answer was stored as the key's result: " + retry.body());
    assertEquals(2, failures.get(), "the handler that threw released its claim: the retry runs it again");
    assertNotEquals(409, retry.statusCode());
  }

  private HttpResponse<String> post(String path, String key) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header(IdempotencyGuard.DEFAULT_KEY_HEADER, key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"a\"}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  private final class Orders extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
      switch (req.getPathInfo()) {
        case "/forward" -> {
          req.setAttribute("order", effects.incrementAndGet());
          req.getRequestDispatcher("/view").forward(req, resp);
        }
        case "/include" -> {
          req.setAttribute("order", effects.incrementAndGet());
          resp.setStatus(201);
          req.getRequestDispatcher("/view").include(req, resp);
        }
        default -> {
          failures.incrementAndGet();
          throw new IllegalStateException("the handler failed");
        }
      }
    }
  }

  private static final class View extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      if (req.getDispatcherType() == DispatcherType.FORWARD) {
        resp.setStatus(201);
      }
      resp.setContentType("text/plain");
      resp.getWriter().print("order " + req.getAttribute("order"));
    }
  }

  private static final class ErrorPage extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      resp.setStatus(500);
      resp.setContentType("text/plain");
      resp.getWriter().print("error page");
    }
  }
}
