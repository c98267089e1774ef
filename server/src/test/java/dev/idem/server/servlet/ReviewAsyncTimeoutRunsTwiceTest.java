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
 * Defect: when an async request times out (AsyncListener.onTimeout), the servlet filter releases the
 * claim (abandon) although the async handler is still running on its worker thread: the Servlet
 * container does not stop it. A client's retry with the same key is then admitted and runs the
 * handler a second time, concurrently with the first run, which is exactly what the guard exists to
 * prevent (a slow payment call that outlives the container's async timeout, e.g. Spring MVC's
 * Callable/DeferredResult with the default 30 s async timeout, is charged twice).
 */
class ReviewAsyncTimeoutRunsTwiceTest {
  private final AtomicInteger runs = new AtomicInteger();
  private final AtomicInteger running = new AtomicInteger();
  private final AtomicInteger maxRunning = new AtomicInteger();
  private final CountDownLatch downstreamAnswers = new CountDownLatch(1);
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
    context.addServlet(new ServletHolder(new SlowCharges()), "/*");
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard)), "/*",
        EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
    server.setHandler(context);
    server.start();
    port = connector.getLocalPort();
  }

  @AfterEach
  void stop() throws Exception {
    downstreamAnswers.countDown();
    server.stop();
    workers.shutdownNow();
    guard.close();
  }

  @Test
  void aRetryAfterAnAsyncTimeoutDoesNotRunTheHandlerBesideTheStillRunningFirstRun() throws Exception {
    HttpResponse<String> first = post("k-slow-charge");
    // The first run is still inside its (slow) downstream call: its worker has not finished.
    assertEquals(1, running.get(), "the first run is still in progress; first answer " + first.statusCode());

    HttpResponse<String> retry = post("k-slow-charge");

    assertEquals(1, maxRunning.get(), "two runs of the handler for one key at the same time (retry answered "
        + retry.statusCode() + ", runs=" + runs.get() + ")");
    assertEquals(1, runs.get(), "the retry ran the handler while the first run was still going");
  }

  private HttpResponse<String> post(String key) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/charges"))
        .timeout(Duration.ofSeconds(10)).header("Idempotency-Key", key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":100}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** An async servlet whose effect (a downstream charge) outlives the container's async timeout. */
  private final class SlowCharges extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      req.getInputStream().readAllBytes();
      AsyncContext async = req.startAsync();
      async.setTimeout(100);
      // The run starts here, on the request thread, before the answer can reach the client.
      runs.incrementAndGet();
      maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
      workers.execute(() -> {
        try {
          downstreamAnswers.await(); // the charge is in progress downstream
          HttpServletResponse r = (HttpServletResponse) async.getResponse();
          r.setStatus(201);
          r.getOutputStream().write("charged".getBytes(StandardCharsets.UTF_8));
          async.complete();
        } catch (InterruptedException | IOException | IllegalStateException e) {
          // the container may have recycled the request by now
        } finally {
          running.decrementAndGet();
        }
      });
    }
  }
}
