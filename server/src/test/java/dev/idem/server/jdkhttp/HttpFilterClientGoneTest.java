package dev.idem.server.jdkhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
 * The JDK HttpServer filter, on a loopback port 0: a client that goes away while an over-cap
 * response streams gets the stored result on its retry, not a second run of the handler.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class HttpFilterClientGoneTest {
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
   * An over-cap response is streamed to the client once it passes the capture cap. If the client
   * goes away while it streams (its read timeout fired: the very case a retry is for), the write
   * fails inside the handler, after the handler's effect. Before the fix the filter took the
   * IOException for a failed handler and abandoned the claim, so the client's retry ran the handler
   * again.
   */
  @Test
  void aClientThatDisconnectsWhileAnOverCapResponseStreamsDoesNotGetASecondEffectOnRetry() throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).maxCapturedBody(1024).build();
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
    executor = Executors.newFixedThreadPool(4);
    server.setExecutor(executor);
    CountDownLatch clientGone = new CountDownLatch(1);
    CountDownLatch firstDone = new CountDownLatch(1);
    HttpContext reports = server.createContext("/reports", exchange -> {
      exchange.getRequestBody().readAllBytes();
      int run = runs.incrementAndGet(); // the effect
      exchange.getResponseHeaders().set("Content-Type", "text/plain");
      exchange.sendResponseHeaders(201, 0);
      byte[] chunk = new byte[8192];
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(chunk); // past the cap: the status and headers go out now
        out.flush();
        if (run == 1) {
          awaitQuietly(clientGone);
          for (int i = 0; i < 100_000; i++) { // at most ~800 MB: fails long before, on the closed socket
            out.write(chunk);
          }
        }
      }
    });
    // Outermost: tells the test when the first exchange, guard included, has ended.
    reports.getFilters().add(new Filter() {
      @Override
      public void doFilter(HttpExchange exchange, Chain chain) throws java.io.IOException {
        try {
          chain.doFilter(exchange);
        } finally {
          firstDone.countDown();
        }
      }

      @Override
      public String description() {
        return "done";
      }
    });
    reports.getFilters().add(new IdempotencyHttpFilter(guard));
    server.start();
    int port = server.getAddress().getPort();
    String request = "POST /reports HTTP/1.1\r\nHost: localhost\r\nIdempotency-Key: k-report\r\n"
        + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      String head = readHead(socket.getInputStream());
      assertTrue(head.startsWith("HTTP/1.1 201"), head);
      socket.setSoLinger(true, 0); // a reset, as a client's timeout often ends it
    }
    clientGone.countDown();
    assertTrue(firstDone.await(20, TimeUnit.SECONDS), "the first exchange ended");
    HttpRequest again = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/reports"))
        .timeout(Duration.ofSeconds(10)).header("Idempotency-Key", "k-report")
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{}")).build();
    int retry = status(again);

    assertEquals(201, retry);
    assertEquals(1, runs.get(), "the handler's effect ran again on the client's retry");
  }

  private static String readHead(InputStream in) throws java.io.IOException {
    StringBuilder head = new StringBuilder();
    while (head.indexOf("\r\n\r\n") < 0) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      head.append((char) b);
    }
    return head.toString();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(20, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private int status(HttpRequest r) throws Exception {
    try {
      return http.send(r, HttpResponse.BodyHandlers.ofString()).statusCode();
    } catch (java.io.IOException e) {
      return -1;
    }
  }
}
