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

  private HttpResponse<String> post(String path, String form, String key) throws Exception {
    return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/x-www-form-urlencoded").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
