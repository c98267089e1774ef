package dev.idem.server.jdkhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpServer;
import dev.idem.jdbc.support.RawHttp;
import dev.idem.server.AdapterContract;
import dev.idem.server.Claim;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.support.OrderApp;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The JDK HttpServer filter on a loopback port 0. */
class HttpServerFilterTest extends AdapterContract {
  private HttpServer server;
  private ExecutorService executor;
  /** The /probe handler of a request in mode "wait" counts down the first and waits for the second. */
  private final CountDownLatch waiting = new CountDownLatch(1);
  private final CountDownLatch released = new CountDownLatch(1);

  @Override
  protected URI start(IdempotencyGuard guard) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    executor = Executors.newFixedThreadPool(40);
    server.setExecutor(executor);
    HttpContext context = server.createContext("/", exchange -> {
      String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
      String mode = exchange.getRequestHeaders().getFirst("X-Mode");
      byte[] body = exchange.getRequestBody().readAllBytes();
      OrderApp.Answer a;
      try {
        a = app.handle(key, mode, body);
      } catch (InterruptedException e) {
        throw new IOException(e);
      }
      exchange.getResponseHeaders().set("Content-Type", a.contentType());
      if (a.location() != null) {
        exchange.getResponseHeaders().set("Location", a.location());
      }
      exchange.sendResponseHeaders(a.status(), a.body().length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(a.body());
      }
    });
    context.getFilters().add(new IdempotencyHttpFilter(guard, e -> e.getRequestHeaders().getFirst("X-Caller")));
    HttpContext probe = server.createContext("/probe", exchange -> {
      exchange.getRequestBody().readAllBytes();
      Object before = exchange.getAttribute(Claim.ATTRIBUTE);
      if ("wait".equals(exchange.getRequestHeaders().getFirst("X-Mode"))) {
        waiting.countDown();
        awaitQuietly(released);
      } else if ("release".equals(exchange.getRequestHeaders().getFirst("X-Mode"))) {
        released.countDown();
      }
      Object after = exchange.getAttribute(Claim.ATTRIBUTE);
      byte[] seen = (name(before) + " " + name(after)).getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, seen.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(seen);
      }
    });
    probe.getFilters().add(new IdempotencyHttpFilter(guard));
    server.start();
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
  }

  private static String name(Object claim) {
    return claim == null ? "none" : ((Claim) claim).operationId();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(20, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * On JDK 17 an exchange's attributes are its context's, shared by every exchange. The claim was
   * set there: a handler read the claim of the request that came in after its own, and an unguarded
   * request read the claim of the last guarded one.
   */
  @Test
  void eachHandlerSeesItsOwnClaimAndAnUnguardedOneSeesNone() throws Exception {
    startDefault();
    CompletableFuture<HttpResponse<String>> held = CompletableFuture.supplyAsync(() -> {
      try {
        return post("/probe", "k-held", null, "wait", "{}");
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    assertTrue(waiting.await(20, TimeUnit.SECONDS), "the first request reached its handler");
    String[] second = post("/probe", "k-second", null, "release", "{}").body().split(" ");
    String[] first = held.get(20, TimeUnit.SECONDS).body().split(" ");
    HttpResponse<String> unguarded = http.send(HttpRequest.newBuilder(base.resolve("/probe")).GET().build(),
        HttpResponse.BodyHandlers.ofString());

    assertNotEquals("none", first[0]);
    assertEquals(first[0], first[1], "the held handler's claim is still its own after another request came in");
    assertEquals(second[0], second[1]);
    assertNotEquals(first[0], second[0]);
    assertEquals("none none", unguarded.body());
  }

  /**
   * The JDK's server reads at most 64 KiB of a body left unread before it reuses the connection;
   * past that it resets the connection, after an answer that did not say so (checked on JDK 17), and
   * the client's next request on it fails. A refusal of a large body it never read says it closes;
   * a small one keeps the connection.
   */
  @Test
  void aRefusalOfALargeUnreadBodySaysTheConnectionClosesAndASmallOneKeepsIt() throws Exception {
    startDefault();
    try (Socket socket = new Socket(base.getHost(), base.getPort())) {
      socket.setSoTimeout(10_000);
      String small = exchange(socket, "{}".length(), "{}");
      assertTrue(small.startsWith("HTTP/1.1 400 "), small);
      assertFalse(RawHttp.closes(small), small);
      String large = exchange(socket, 200_000, "");
      assertTrue(large.startsWith("HTTP/1.1 400 "), "the kept connection answers the next request: " + large);
      assertTrue(RawHttp.closes(large), large);
    }
    assertEquals(0, app.totalEffects());
  }

  /** Sends a POST without a key, of the declared length with the given start of its body; reads the answer. */
  private static String exchange(Socket socket, int length, String body) throws IOException {
    return RawHttp.exchange(socket, "POST /orders HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        + "Content-Length: " + length + "\r\n\r\n" + body);
  }

  @Override
  protected void stop() {
    if (server != null) {
      server.stop(0);
      executor.shutdownNow();
    }
  }
}
