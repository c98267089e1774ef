package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
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
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: credential names are taken out of a form body too, the canonical one of a consumed form included.
 *
 * <p>Review finding on 9a8e9683/384e3489 (credential query parameters left out of the fingerprint).
 *
 * <p>The rule is applied to the raw query only ({@code RequestFingerprints.of} strips
 * {@code access_token}, {@code api_key}, the {@code X-Amz-*}/{@code X-Goog-*} signature names from
 * {@code rawQuery}). But when a filter ahead of the guard has consumed a form body (a CSRF check
 * that reads a parameter, Spring's {@code FormContentFilter} for PUT/PATCH/DELETE, which Spring Boot
 * registers by default), {@code IdempotencyFilter.readBody} fingerprints
 * {@code FormBody.canonical(request.getParameterMap())} as the body, and the Servlet parameter map
 * holds the <em>query's</em> parameters too. So the {@code access_token} of the query is put back
 * into the fingerprint through the body, unstripped.
 *
 * <p>Consequence: exactly the failure the commits set out to fix, for such routes. A client that
 * authenticates with {@code ?access_token=} (RFC 6750 section 2.3) and refreshed its token between a
 * timed-out attempt and its retry is refused 422 "key reused" (a permanent failure for Idem's client
 * and the IETF draft) although the first attempt's effect exists; docs/server.md promises such a
 * retry is replayed.
 */
class ConsumedFormQueryCredentialTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final AtomicInteger runs = new AtomicInteger();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private IdempotencyGuard guard;
  private Server server;
  private URI base;

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(store).purgeInterval(null).build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new Orders(runs)), "/*");
    // A filter ahead of the guard that reads a parameter (as a CSRF check does): the form is consumed.
    Filter readsParameters = (req, res, chain) -> {
      req.getParameter("_csrf");
      chain.doFilter(req, res);
    };
    context.addFilter(new FilterHolder(readsParameters), "/*", EnumSet.of(DispatcherType.REQUEST));
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard, r -> "alice")), "/*",
        EnumSet.of(DispatcherType.REQUEST));
    server.setHandler(context);
    server.start();
    base = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
  }

  @AfterEach
  void stop() throws Exception {
    server.stop();
    guard.close();
  }

  @Test
  void aRetryWhoseQueryAccessTokenWasRefreshedIsReplayedWhenAFilterReadTheForm() throws Exception {
    HttpResponse<String> first = post("orders?access_token=tok-before", "qty=1");
    HttpResponse<String> retry = post("orders?access_token=tok-after-refresh", "qty=1");

    assertEquals(200, first.statusCode(), first.body());
    assertEquals(200, retry.statusCode(), "the same order under the same key, only its query access_token"
        + " refreshed, was answered " + retry.statusCode() + " (" + retry.body() + "): the consumed form's"
        + " fingerprint is the request's parameter map, query credentials included");
    assertEquals("true", retry.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null));
    assertEquals(1, runs.get());
  }

  private HttpResponse<String> post(String path, String form) throws Exception {
    return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/x-www-form-urlencoded").header("Idempotency-Key", "k-form-token")
        .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
  }

  static final class Orders extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient AtomicInteger runs;

    Orders(AtomicInteger runs) {
      this.runs = runs;
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      resp.setContentType("text/plain;charset=UTF-8");
      resp.getWriter().print("order " + runs.incrementAndGet() + " qty=" + req.getParameter("qty"));
    }
  }
}
