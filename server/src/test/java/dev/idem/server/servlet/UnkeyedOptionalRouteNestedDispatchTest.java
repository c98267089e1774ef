package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.RoutePolicy;
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
import java.time.Duration;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.ErrorPageErrorHandler;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test (found by review of the nested-dispatch fix).
 *
 * <p>The filter mapped for every dispatcher type (the catch-all mapping b8bbf1f5 and its docs line
 * describe), with a route whose key is optional ({@code new RoutePolicy(false, ...)}: a legacy
 * client's POST without a key runs unguarded). Such a request carries no {@code Claim} attribute, so
 * its nested dispatches are not passed through: each is admitted as a new request under the nested
 * path, where POST needs a key. The handler's forward to its view, and the error page of a handler
 * that threw, are answered {@code 400 Idempotency-Key is missing} instead: the client of a request
 * the guard let through gets a refusal for a key the route does not require (and the handler's
 * effect is done).
 */
class UnkeyedOptionalRouteNestedDispatchTest {
  private final HttpClient http = HttpClient.newHttpClient();
  private LoopbackJetty jetty;
  private IdempotencyGuard guard;
  private int port;

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore())
        .route("POST", "/legacy/forward", new RoutePolicy(false, Duration.ofHours(1)))
        .route("POST", "/legacy/throw", new RoutePolicy(false, Duration.ofHours(1))).build();
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new Legacy()), "/legacy/*");
    context.addServlet(new ServletHolder(new View()), "/view");
    context.addServlet(new ServletHolder(new ErrorPage()), "/error");
    ErrorPageErrorHandler errors = new ErrorPageErrorHandler();
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
  void theViewOfAnUnkeyedRequestOnAKeyOptionalRouteIsItsAnswer() throws Exception {
    HttpResponse<String> r = post("/legacy/forward");
    assertEquals(201, r.statusCode(), r.body());
    assertEquals("order 1", r.body());
  }

  @Test
  void theErrorPageOfAnUnkeyedRequestOnAKeyOptionalRouteIsItsAnswer() throws Exception {
    HttpResponse<String> r = post("/legacy/throw");
    assertEquals(500, r.statusCode(), r.body());
    assertEquals("error page", r.body());
  }

  private HttpResponse<String> post(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"a\"}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static final class Legacy extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
      if ("/forward".equals(req.getPathInfo())) {
        req.setAttribute("order", 1);
        req.getRequestDispatcher("/view").forward(req, resp);
      } else {
        throw new IllegalStateException("the handler failed");
      }
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
