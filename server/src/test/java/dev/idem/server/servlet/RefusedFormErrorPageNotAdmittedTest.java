package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.KeyScope;
import jakarta.servlet.DispatcherType;
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
import org.junit.jupiter.api.Test;

/**
 * Regression test (found by review of the nested-dispatch fix).
 *
 * <p>The filter mapped for every dispatcher type (the catch-all mapping the docs now describe) refuses
 * a keyed form it cannot take (more than {@link IdempotencyFilter#MAX_FORM_PAIRS} pairs) with
 * {@code sendError(400)} on the container's response, before anything is claimed. The container then
 * runs an ERROR dispatch to the app's error page. That dispatch carries no {@code Claim} attribute
 * (nothing was admitted), so b8bbf1f5's pass-through does not apply and the filter admits it as a
 * new keyed request: the error page runs as the guarded operation and its answer is stored under
 * the client's key. The client that then sends its corrected form with the same key (nothing was
 * processed, the 400 said) gets an error page instead of its operation: a replay of the stored
 * error page, or a refusal for a key reused with another payload. The handler never runs.
 */
class RefusedFormErrorPageNotAdmittedTest {
  private final AtomicInteger effects = new AtomicInteger();
  private final AtomicInteger errorPages = new AtomicInteger();
  private final HttpClient http = HttpClient.newHttpClient();
  private LoopbackJetty jetty;
  private IdempotencyGuard guard;
  private int port;

  private void start(KeyScope scope) throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).scope(scope).build();
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new Orders()), "/orders");
    context.addServlet(new ServletHolder(new ErrorPage()), "/error");
    ErrorPageErrorHandler errors = new ErrorPageErrorHandler();
    errors.addErrorPage(ErrorPageErrorHandler.GLOBAL_ERROR_PAGE, "/error");
    context.setErrorHandler(errors);
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard)), "/*", EnumSet.allOf(DispatcherType.class));
    jetty = LoopbackJetty.start(context);
    port = jetty.port();
  }

  @AfterEach
  void stop() throws Exception {
    if (jetty != null) {
      jetty.close();
      guard.close();
    }
  }

  /**
   * With keys scoped per caller ({@link KeyScope#CALLER}), the error page's record is the key's
   * record: the corrected form sent with the same key never runs the handler (it is refused, or
   * answered the stored error page).
   */
  @Test
  void theCorrectedRetryOfARefusedFormRunsTheHandler() throws Exception {
    start(KeyScope.CALLER);
    HttpResponse<String> refused = post("k-form", tooManyPairs());
    assertEquals(400, refused.statusCode(), refused.body());

    HttpResponse<String> corrected = post("k-form", "sku=a&qty=1");
    assertEquals(201, corrected.statusCode(), "the corrected form was not run; got " + corrected.statusCode()
        + " " + corrected.headers().map() + " " + corrected.body());
    assertEquals("order 1", corrected.body());
    assertEquals(1, effects.get());
  }

  /**
   * With the default scope the error page is stored under the error page's route: the same refused
   * form sent again is answered by a replay of the first error page (marked replayed, the error page
   * not run), as if the key's operation had been done before.
   */
  @Test
  void aRefusalIsNeverAReplay() throws Exception {
    start(KeyScope.CALLER_AND_ROUTE);
    HttpResponse<String> refused = post("k-form", tooManyPairs());
    assertEquals(400, refused.statusCode(), refused.body());

    HttpResponse<String> again = post("k-form", tooManyPairs());
    assertEquals(400, again.statusCode(), again.body());
    assertNull(again.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null),
        "the error page of the first refusal was stored under the key and replayed: " + again.body());
    assertEquals(2, errorPages.get(), "the error page runs for each refusal");
  }

  private static String tooManyPairs() {
    StringBuilder form = new StringBuilder();
    for (int i = 0; i <= IdempotencyFilter.MAX_FORM_PAIRS; i++) {
      form.append(i == 0 ? "" : "&").append("k").append(i).append("=v");
    }
    return form.toString();
  }

  private HttpResponse<String> post(String key, String form) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
        .header(IdempotencyGuard.DEFAULT_KEY_HEADER, key)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private final class Orders extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      resp.setStatus(201);
      resp.setContentType("text/plain");
      resp.getWriter().print("order " + effects.incrementAndGet());
    }
  }

  private final class ErrorPage extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      errorPages.incrementAndGet();
      resp.setContentType("text/plain");
      resp.getWriter().print("error page " + req.getAttribute("jakarta.servlet.error.status_code"));
    }
  }
}
