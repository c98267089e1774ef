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
import java.util.Arrays;
import java.util.Collections;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A keyed form-encoded POST ({@code application/x-www-form-urlencoded}: an HTML form,
 * {@code curl -d}) to a servlet behind the plain {@link IdempotencyFilter}, on Jetty. The guard reads
 * the body to fingerprint it; a container parses a POST's form parameters only from a stream nobody
 * read, so the servlet's {@code getParameter} must come from the guard's wrapper, with the query's
 * parameters first, as the container gives them to the same servlet without the guard
 * ({@code /plain/}). Under {@code /read-first/} a filter ahead of the guard reads the parameters
 * (as a CSRF check does) and so consumes the body: the guard then fingerprints the parameters, so
 * that a key reused with another form is refused, not replayed.
 */
class FormParametersServletTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private IdempotencyGuard guard;
  private Server server;
  private URI base;

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(store).build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new ParameterServlet(runs)), "/*");
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
    server.stop();
    guard.close();
  }

  @Test
  void aKeyedFormPostHasTheParametersTheContainerGivesWithoutTheGuard() throws Exception {
    String type = "application/x-www-form-urlencoded";
    String form = "qty=1&note=two+words&qty=2&empty=&bare&x=%26%3D";
    HttpResponse<String> plain = post("/plain/orders?qty=0&src=q", type, form, "k-plain");
    HttpResponse<String> guarded = post("/guarded/orders?qty=0&src=q", type, form, "k-form-1");
    HttpResponse<String> replay = post("/guarded/orders?qty=0&src=q", type, form, "k-form-1");

    assertEquals("200 qty=[0, 1, 2] src=[q] note=[two words] empty=[] bare=[] x=[&=]", plain.statusCode() + " "
        + plain.body(), "the container's own parameters: the query's first");
    assertEquals(plain.body(), guarded.body(), "the guarded servlet sees the parameters the container gives");
    assertEquals(plain.body(), replay.body(), "the replay is that answer");
    assertEquals(1, runs.get("/guarded/orders").get(), "the guarded servlet ran once for its key");
  }

  @Test
  void theFormIsDecodedInTheCharsetItsContentTypeNames() throws Exception {
    String form = "name=caf%C3%A9";
    HttpResponse<String> plain = post("/plain/names", "application/x-www-form-urlencoded; charset=UTF-8", form, "k");
    HttpResponse<String> guarded = post("/guarded/names", "application/x-www-form-urlencoded; charset=UTF-8", form,
        "k-charset-1");

    assertEquals("name=[caf\u00e9]", plain.body());
    assertEquals(plain.body(), guarded.body());
  }

  @Test
  void aFormReadByAnEarlierFilterIsFingerprintedByItsParameters() throws Exception {
    String type = "application/x-www-form-urlencoded";
    HttpResponse<String> first = post("/read-first/orders", type, "qty=1", "k-read-first");
    HttpResponse<String> other = post("/read-first/orders", type, "qty=5", "k-read-first");
    HttpResponse<String> same = post("/read-first/orders", type, "qty=1", "k-read-first");

    assertEquals("qty=[1]", first.body(), "the servlet sees the parameters the earlier filter read");
    assertEquals(422, other.statusCode(), "the key reused with another form is refused: " + other.body());
    assertEquals("qty=[1]", same.body(), "the same form is the replay");
    assertEquals("true", same.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null));
    assertEquals(1, runs.get("/read-first/orders").get(), "one run for the key");
  }

  private HttpResponse<String> post(String path, String type, String form, String key) throws Exception {
    return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", type).header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Answers the request's parameters, in the order the request names them. */
  static final class ParameterServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient Map<String, AtomicInteger> runs;

    ParameterServlet(Map<String, AtomicInteger> runs) {
      this.runs = runs;
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      runs.computeIfAbsent(req.getRequestURI(), k -> new AtomicInteger()).incrementAndGet();
      StringBuilder answer = new StringBuilder();
      for (String name : Collections.list(req.getParameterNames())) {
        String[] values = req.getParameterValues(name);
        if (!Arrays.equals(values, req.getParameterMap().get(name)) || !values[0].equals(req.getParameter(name))) {
          throw new IllegalStateException("getParameterValues, getParameterMap and getParameter disagree on " + name);
        }
        answer.append(answer.isEmpty() ? "" : " ").append(name).append('=').append(Arrays.toString(values));
      }
      resp.setContentType("text/plain;charset=UTF-8");
      resp.getWriter().print(answer);
    }
  }
}
