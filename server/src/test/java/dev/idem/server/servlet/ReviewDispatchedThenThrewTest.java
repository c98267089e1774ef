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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
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
 * Defect: a handler that went async, whose async work finished (effect made) and asked for the async
 * dispatch that renders its answer (Spring's Callable/DeferredResult way), and whose request thread
 * then threw (a later step, before returning) has its claim let go by threwWhileAsync. The dispatch
 * still runs afterwards and sends the handler's answer, but the filter no longer stores it: the
 * answer is sent unstored, the key is held 409 for a lease or two, and then a retry runs the handler
 * (and the charge) a second time. The commit says "If the async processing already ended (the work
 * completed before the throw), its answer stays stored": for the dispatch way of ending, it does not.
 */
class ReviewDispatchedThenThrewTest {
  private final AtomicInteger runs = new AtomicInteger();
  private final AtomicInteger effects = new AtomicInteger();
  private final AtomicInteger rendered = new AtomicInteger();
  private final ExecutorService workers = Executors.newCachedThreadPool();
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
    context.addServlet(new ChargeThenDispatch(), "/*");
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard)), "/*",
        EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
    server.setHandler(context);
    server.start();
    port = connector.getLocalPort();
  }

  @AfterEach
  void stop() throws Exception {
    server.stop();
    workers.shutdownNow();
    guard.close();
  }

  @Test
  void theAnswerOfWorkThatFinishedAndDispatchedBeforeTheThrowIsStoredAndReplayed() throws Exception {
    HttpResponse<String> first = post("k-dispatched");
    assertEquals(1, effects.get());

    HttpResponse<String> retry = post("k-dispatched");

    assertEquals(1, runs.get());
    assertEquals(201, retry.statusCode(), "the work finished and its answer was rendered (first answered "
        + first.statusCode() + " " + first.body() + ", rendered " + rendered.get() + " times), but the retry got "
        + retry.statusCode() + " " + retry.body() + ": the answer was not stored and the key is held in flight"
        + " until its lease runs out, when a retry runs the charge again");
    assertEquals("charged", retry.body());
  }

  private HttpResponse<String> post(String key) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/charges"))
        .timeout(Duration.ofSeconds(10)).header("Idempotency-Key", key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":100}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Charges on a worker that dispatches to render the result; the request thread then fails. */
  private final class ChargeThenDispatch extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      if (req.getDispatcherType() == DispatcherType.ASYNC) {
        rendered.incrementAndGet();
        resp.setStatus(201);
        resp.getOutputStream().write(((String) req.getAttribute("result")).getBytes(StandardCharsets.UTF_8));
        return;
      }
      req.getInputStream().readAllBytes();
      runs.incrementAndGet();
      AsyncContext async = req.startAsync();
      CountDownLatch dispatched = new CountDownLatch(1);
      workers.execute(() -> {
        effects.incrementAndGet();
        async.getRequest().setAttribute("result", "charged");
        async.dispatch();
        dispatched.countDown();
      });
      try {
        if (!dispatched.await(10, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the worker did not dispatch");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException("a later step of the handler failed");
    }
  }
}
