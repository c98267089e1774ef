package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
 * README.md, "The server half", mapped the Servlet filter as
 * {@code context.addFilter(new FilterHolder(new IdempotencyFilter(guard)), "/orders/*", EnumSet.of(DispatcherType.REQUEST))}
 * ("any Servlet 6 container; here Jetty 12 (ee10)"), and says the guard stores the result and
 * replays it with {@code Idempotent-Replayed: true}. docs/server.md's quickstart maps it for
 * {@code REQUEST, ASYNC}, and explains why: a servlet that answers on an async dispatch
 * ({@code startAsync} then {@code AsyncContext.dispatch()}, as Spring MVC's {@code Callable} and
 * {@code DeferredResult} do) is answered outside a REQUEST-only filter, so on Jetty the answer goes
 * out without its body, unstored, and the claim is released ({@code IdempotencyFilter}'s Javadoc;
 * a WARN says "map the filter for ASYNC dispatches too"). A client whose first answer was lost then retries with the same
 * key and the handler runs a second time: two orders for one key, the one thing the guard is for.
 * Text defect (code right): the README's snippet must map ASYNC too, as docs/server.md does (mapping
 * it costs nothing for servlets that never go async).
 *
 * <p>The same Jetty 12 setup and async-dispatch servlet as {@code AsyncServletFilterTest}, with the
 * filter mapped exactly as the README now writes it ({@code REQUEST, ASYNC}).
 */
class RvRqsReadmeFilterMappingTest {
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
    // README.md, as written (its path pattern, its dispatcher types):
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard)), "/orders/*",
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
  void aRetryOfAnOrderAnsweredOnAnAsyncDispatchIsReplayedNotRunAgain() throws Exception {
    HttpResponse<String> first = post("/orders/dispatch", "k-dispatch");
    HttpResponse<String> retry = post("/orders/dispatch", "k-dispatch");

    String seen = "first answer " + first.statusCode() + " \"" + first.body() + "\", retry answer " + retry.statusCode()
        + " \"" + retry.body() + "\" (replayed header " + retry.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER)
        .orElse("absent") + "), handler runs " + effects.get();
    assertEquals(1, effects.get(), "README's filter mapping: the retry of one key ran the handler again; " + seen);
    assertEquals("order 1", first.body(), "README's filter mapping: the first answer lost its body; " + seen);
    assertEquals("true", retry.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null), seen);
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
      switch (req.getRequestURI().substring("/orders".length())) {
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
