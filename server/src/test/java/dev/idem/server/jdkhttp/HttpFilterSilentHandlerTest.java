package dev.idem.server.jdkhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.net.httpserver.HttpServer;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The JDK HttpServer filter, on a loopback port 0: a handler that returns without sending a
 * status is a failed handler, answered 500 and not recorded.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class HttpFilterSilentHandlerTest {
  private final AtomicInteger runs = new AtomicInteger();
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private IdempotencyGuard guard;
  private HttpServer server;
  private ExecutorService executor;

  @AfterEach
  void tearDown() {
    if (server != null) {
      server.stop(0);
      executor.shutdownNow();
    }
    if (guard != null) {
      guard.close();
    }
  }

  /**
   * A handler that returns without sending a response (a bug; on the JDK server the client then
   * gets no answer, or a closed connection) was recorded by the guard as "200, empty body": the
   * first caller and every retry for 24 h were told the operation succeeded, which the handler
   * never said.
   */
  @Test
  void aHandlerThatSendsNoResponseIsNotRecordedAsA200() throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).build();
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
    executor = Executors.newFixedThreadPool(4);
    server.setExecutor(executor);
    server.createContext("/orders", exchange -> {
      exchange.getRequestBody().readAllBytes();
      runs.incrementAndGet();
      // forgot sendResponseHeaders: returns without an answer
    }).getFilters().add(new IdempotencyHttpFilter(guard));
    server.start();
    URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/orders");
    HttpRequest post = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
        .header("Idempotency-Key", "k-silent").header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A1\"}")).build();

    int first = status(post);
    int retry = status(post);

    assertEquals(500, first, "the handler sent no status; the guard must not make up a 200");
    assertEquals(500, retry, "nor store one for replay");
    assertEquals(2, runs.get(), "the claim was released, as for a handler that threw");
  }

  private int status(HttpRequest r) throws Exception {
    try {
      return http.send(r, HttpResponse.BodyHandlers.ofString()).statusCode();
    } catch (java.io.IOException e) {
      return -1;
    }
  }
}
