package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A handler that starts async work and then throws on the request thread, in a real Jetty 12 (ee10)
 * on a loopback port 0. The throw does not stop the async work, which makes its effect later on its
 * own thread: releasing the claim when the throw passes the filter (as the filter did) let the
 * client's retry run the handler a second time beside the first. The key must stay in flight instead,
 * as after an async timeout, whether or not the filter is mapped for ASYNC dispatches.
 */
class ThrowAfterStartAsyncTest {
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
  private final CountDownLatch downstreamAnswers = new CountDownLatch(1);
  private final CountDownLatch effectMade = new CountDownLatch(1);
  private final ExecutorService workers = Executors.newCachedThreadPool();
  private final HttpClient http = HttpClient.newHttpClient();
  private Server server;
  private IdempotencyGuard guard;
  private int port;

  @BeforeEach
  void createGuard() {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).build();
  }

  private void start(EnumSet<DispatcherType> dispatches) throws Exception {
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new StartThenThrow()), "/*");
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard)), "/*", dispatches);
    server.setHandler(context);
    server.start();
    port = connector.getLocalPort();
  }

  @AfterEach
  void stop() throws Exception {
    downstreamAnswers.countDown();
    if (server != null) {
      server.stop();
    }
    workers.shutdownNow();
    guard.close();
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aRetryDoesNotRunTheHandlerWhileTheAsyncWorkOfAThrownRunStillGoesOn(boolean mappedForAsync)
      throws Exception {
    start(mappedForAsync ? EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC)
        : EnumSet.of(DispatcherType.REQUEST));

    HttpResponse<String> first = post("/charges", "k-throw");
    assertNotEquals(201, first.statusCode(), "the handler threw: " + first.body());
    // The first run's async work is still inside its downstream call.
    assertEquals(0, count(effects, "k-throw"));

    HttpResponse<String> retry = post("/charges", "k-throw");

    assertEquals(1, count(runs, "k-throw"), "the retry ran the handler while the first run's async work still"
        + " went on (retry answered " + retry.statusCode() + ")");
    assertEquals(409, retry.statusCode(), retry.body());

    downstreamAnswers.countDown();
    assertTrue(effectMade.await(10, TimeUnit.SECONDS));
    HttpResponse<String> later = post("/charges", "k-throw");
    assertEquals(1, count(runs, "k-throw"), "a retry within the lease ran the handler again (answered "
        + later.statusCode() + ")");
    assertEquals(1, count(effects, "k-throw"));
  }

  /** The same on an async dispatch that goes async again and then throws. */
  @Test
  void aRetryDoesNotRunTheHandlerWhileTheAsyncWorkOfAThrownAsyncDispatchStillGoesOn() throws Exception {
    start(EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));

    HttpResponse<String> first = post("/redispatch", "k-redispatch");
    assertNotEquals(201, first.statusCode(), "the handler threw: " + first.body());
    HttpResponse<String> retry = post("/redispatch", "k-redispatch");

    assertEquals(1, count(runs, "k-redispatch"), "the retry ran the handler while the first run's async work"
        + " still went on (retry answered " + retry.statusCode() + ")");
    assertEquals(409, retry.statusCode(), retry.body());
    downstreamAnswers.countDown();
    assertTrue(effectMade.await(10, TimeUnit.SECONDS));
    assertEquals(1, count(effects, "k-redispatch"));
  }

  /**
   * The async work made its effect and completed the async processing before the request thread
   * threw: its answer was stored then, and a retry replays it rather than waiting for the lease.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void theAnswerOfWorkThatCompletedBeforeTheThrowIsStoredAndReplayed(boolean mappedForAsync) throws Exception {
    start(mappedForAsync ? EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC)
        : EnumSet.of(DispatcherType.REQUEST));

    post("/completed", "k-completed");
    assertEquals(1, count(effects, "k-completed"));
    HttpResponse<String> retry = post("/completed", "k-completed");

    assertEquals(1, count(runs, "k-completed"));
    assertEquals(201, retry.statusCode(), retry.body());
    assertEquals("charged", retry.body());
  }

  private static int count(Map<String, AtomicInteger> counts, String key) {
    AtomicInteger n = counts.get(key);
    return n == null ? 0 : n.get();
  }

  private HttpResponse<String> post(String path, String key) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).header("Idempotency-Key", key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":100}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  /**
   * Starts a charge on a worker, then fails on the request thread (a later step of the handler); on
   * {@code /redispatch} it does so on an async dispatch; on {@code /completed} the work completes before
   * the throw.
   */
  private final class StartThenThrow extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      String key = req.getHeader("Idempotency-Key");
      if (req.getDispatcherType() == DispatcherType.REQUEST) {
        req.getInputStream().readAllBytes();
        runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        if (req.getRequestURI().equals("/redispatch")) {
          // The work starts on the async dispatch instead.
          req.startAsync().dispatch();
          return;
        }
      }
      AsyncContext async = req.startAsync();
      if (req.getRequestURI().equals("/completed")) {
        CountDownLatch completed = new CountDownLatch(1);
        workers.execute(() -> {
          try {
            effects.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            HttpServletResponse r = (HttpServletResponse) async.getResponse();
            r.setStatus(201);
            r.getOutputStream().write("charged".getBytes(StandardCharsets.UTF_8));
            async.complete();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          } finally {
            completed.countDown();
          }
        });
        try {
          completed.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        throw new IllegalStateException("a later step of the handler failed");
      }
      workers.execute(() -> {
        try {
          downstreamAnswers.await(); // the charge is in progress downstream
          effects.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
          effectMade.countDown();
          HttpServletResponse r = (HttpServletResponse) async.getResponse();
          r.setStatus(201);
          r.getOutputStream().write("charged".getBytes(StandardCharsets.UTF_8));
          async.complete();
        } catch (InterruptedException | IOException | IllegalStateException e) {
          // the container has answered and recycled the request by now
        }
      });
      throw new IllegalStateException("a later step of the handler failed");
    }
  }
}
