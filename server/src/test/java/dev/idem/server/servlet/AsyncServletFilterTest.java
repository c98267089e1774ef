package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
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
import java.util.EnumSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 * The Servlet filter in front of async servlets, in a real Jetty 12 (ee10) on a loopback port 0: a
 * servlet that answers after {@code startAsync}, from another thread or on an async dispatch, must
 * reach its client with its answer, and that answer is what a retry replays. Before the fix the
 * filter stored and sent the empty response it held when the servlet returned.
 */
class AsyncServletFilterTest {
  private final AtomicInteger effects = new AtomicInteger();
  private final ExecutorService worker = Executors.newSingleThreadExecutor();
  private final HttpClient http = HttpClient.newHttpClient();
  private Server server;
  private IdempotencyGuard guard;
  private int port;

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new AsyncOrders()), "/*");
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard)), "/*",
        EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
    server.setHandler(context);
    server.start();
    port = connector.getLocalPort();
  }

  @AfterEach
  void stop() throws Exception {
    server.stop();
    worker.shutdownNow();
    guard.close();
  }

  @Test
  void anAnswerWrittenFromAnotherThreadReachesTheClientAndIsReplayed() throws Exception {
    HttpResponse<String> first = post("/complete", "k-complete");
    HttpResponse<String> retry = post("/complete", "k-complete");

    assertEquals(201, first.statusCode());
    assertEquals("order 1", first.body());
    assertNull(first.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null));
    assertEquals(201, retry.statusCode());
    assertEquals("order 1", retry.body());
    assertEquals("true", retry.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null));
    assertEquals(1, effects.get());
  }

  @Test
  void anAnswerWrittenOnAnAsyncDispatchReachesTheClientAndIsReplayed() throws Exception {
    HttpResponse<String> first = post("/dispatch", "k-dispatch");
    HttpResponse<String> retry = post("/dispatch", "k-dispatch");

    assertEquals(201, first.statusCode());
    assertEquals("order 1", first.body());
    assertEquals("order 1", retry.body());
    assertEquals("true", retry.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null));
    assertEquals(1, effects.get());
  }

  /**
   * A timed-out async request is not a failed handler: the container does not stop its async work,
   * so the claim is let go, not released, and a retry gets 409 instead of running the handler beside
   * it (after the lease, {@code GuardLetGoTest}, a retry runs it again).
   */
  @Test
  void aTimedOutAsyncRequestKeepsItsKeyInFlight() throws Exception {
    HttpResponse<String> first = post("/stall", "k-stall");
    HttpResponse<String> retry = post("/stall", "k-stall");

    assertNotEquals(201, first.statusCode());
    assertEquals(409, retry.statusCode());
    assertNull(retry.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null));
    assertEquals(1, effects.get(), "the retry must not run the handler while the first run may still go on");
  }

  private HttpResponse<String> post(String path, String key) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).header("Idempotency-Key", key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  private final class AsyncOrders extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      if (req.getDispatcherType() == DispatcherType.ASYNC) {
        answer(resp, (Integer) req.getAttribute("order"));
        return;
      }
      req.getInputStream().readAllBytes();
      switch (req.getRequestURI()) {
        case "/complete" -> {
          AsyncContext async = req.startAsync(); // the container's own request and response
          worker.execute(() -> {
            try {
              answer((HttpServletResponse) async.getResponse(), effects.incrementAndGet());
            } catch (IOException e) {
              throw new IllegalStateException(e);
            } finally {
              async.complete();
            }
          });
        }
        case "/dispatch" -> {
          AsyncContext async = req.startAsync(req, resp);
          worker.execute(() -> {
            req.setAttribute("order", effects.incrementAndGet());
            async.dispatch();
          });
        }
        default -> {
          AsyncContext async = req.startAsync();
          async.setTimeout(50); // never completed: the container times it out
          effects.incrementAndGet();
        }
      }
    }

    private static void answer(HttpServletResponse resp, int order) throws IOException {
      resp.setStatus(201);
      resp.setContentType("text/plain");
      resp.getOutputStream().write(("order " + order).getBytes(StandardCharsets.UTF_8));
    }
  }
}
