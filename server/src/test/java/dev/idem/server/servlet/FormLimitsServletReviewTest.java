package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Form limits behind the plain {@link IdempotencyFilter} on Jetty, after the fix that makes the
 * guard's request parse a form POST's parameters itself (FormBody.parse) and fingerprint a form an
 * earlier filter consumed by FormBody.canonical of its parameters.
 */
class FormLimitsServletReviewTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private IdempotencyGuard guard;
  private Server server;
  private URI base;

  void start(IdempotencyGuard.Builder builder) throws Exception {
    guard = builder.build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new FormParametersServletTest.ParameterServlet(runs)), "/*");
    Filter readsParameters = (req, res, chain) -> {
      req.getParameterMap();
      chain.doFilter(req, res);
    };
    context.addFilter(new FilterHolder(readsParameters), "/read-first/*", EnumSet.of(DispatcherType.REQUEST));
    IdempotencyFilter filter = new IdempotencyFilter(guard, r -> "alice");
    for (String path : List.of("/guarded/*", "/read-first/*")) {
      context.addFilter(new FilterHolder(filter), path, EnumSet.of(DispatcherType.REQUEST));
    }
    server.setHandler(context);
    server.start();
    base = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
  }

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
    if (guard != null) {
      guard.close();
    }
  }

  /**
   * Jetty refuses a form with more keys than its maxFormKeys (1000 by default; Tomcat has
   * maxParameterCount), a guard against hash-flooding and memory blow-up by parameter count. The
   * guard's own parser (FormBody.parse) has no such limit: behind the guard, with a key, the same
   * form of 5000 keys reaches the servlet with all 5000 parameters, parsed into maps of lists
   * (and copied again by FormBody.merge) for anything up to maxRequestBody (1 MiB: ~250k keys).
   *
   * <p>Expected: the guarded servlet is refused as the plain one is. Actual: 200 with 5000 parameters.
   */
  @Test
  void aFormOverTheContainersKeyLimitIsRefusedBehindTheGuardAsWithoutIt() throws Exception {
    start(IdempotencyGuard.builder(store));
    StringBuilder form = new StringBuilder();
    for (int i = 0; i < 5000; i++) {
      form.append(i == 0 ? "" : "&").append("k").append(i).append('=');
    }
    HttpResponse<String> plain = post("/plain/orders", form.toString(), "k-keys-plain");
    HttpResponse<String> guarded = post("/guarded/orders", form.toString(), "k-keys-1");

    String seen = "plain " + plain.statusCode() + ", guarded " + guarded.statusCode() + " (servlet ran "
        + runs.getOrDefault("/guarded/orders", new AtomicInteger()).get() + " time(s), answer "
        + guarded.body().length() + " chars)";
    assertNotEquals(200, plain.statusCode(), "Jetty's own limit refuses it: " + seen);
    assertEquals(plain.statusCode(), guarded.statusCode(), "the guard bypasses the container's form limit: " + seen);
  }

  /**
   * A form consumed by a filter ahead of the guard (a CSRF check; in Boot, FormContentFilter for
   * PUT/PATCH/DELETE) is fingerprinted by FormBody.canonical of its parameters, which re-encodes
   * every character URLEncoder escapes as three bytes (or six for a non-ASCII one). A body the
   * client sent within maxRequestBody, with characters it did not escape ({@code curl -d} sends
   * {@code {}:"'} and the like as they are), so grows past the cap, and is refused 413 ("may have at
   * most N bytes") although it has far fewer: the same form passes on a route without that filter.
   *
   * <p>Expected: 200 on both routes (60-byte body, cap 100). Actual: 413 where the form was consumed.
   */
  @Test
  void aConsumedFormWithinTheCapIsNotRefusedAsTooLarge() throws Exception {
    start(IdempotencyGuard.builder(store).maxRequestBody(100));
    String form = "v=" + "{".repeat(58);
    assertEquals(60, form.length());
    HttpResponse<String> guarded = post("/guarded/orders", form, "k-cap-1");
    HttpResponse<String> consumed = post("/read-first/orders", form, "k-cap-2");

    assertEquals(200, guarded.statusCode(), "the body is within the cap: " + guarded.body());
    assertEquals(200, consumed.statusCode(), "the same 60-byte form, read by an earlier filter: "
        + consumed.body());
  }

  private HttpResponse<String> post(String path, String form, String key) throws Exception {
    return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/x-www-form-urlencoded").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
