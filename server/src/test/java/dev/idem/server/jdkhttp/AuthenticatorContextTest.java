package dev.idem.server.jdkhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.net.httpserver.BasicAuthenticator;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpServer;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.RecordQuery;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: the filter refuses a context with an Authenticator, loudly, and documents authenticating in a filter before it.
 *
 * <p>{@code IdempotencyHttpFilter}'s Javadoc: "The caller, for key scope, is the exchange's principal
 * (from an {@code Authenticator}) by default", with the filter installed as its example shows,
 * {@code context.getFilters().add(new IdempotencyHttpFilter(guard))}. But the JDK's server runs a
 * context's own filters first, and its system filters, where the context's {@code Authenticator}
 * sits ({@code AuthFilter}), after them, just before the handler. So the guard runs before
 * authentication, and hands the {@code AuthFilter} its own {@code CapturingExchange}:
 * <ul>
 *   <li>an authenticated keyed request is never served: on success the {@code AuthFilter} sets the
 *       principal through {@code ExchangeImpl.get(exchange)}, which casts the exchange to the JDK's
 *       own class and throws {@code ClassCastException} for the guard's wrapper; the guard releases
 *       its claim and the connection is dropped without an answer;</li>
 *   <li>the {@code Authenticator}'s 401 challenge to a keyed request (a client that sends its
 *       credentials only when challenged, as {@code java.net.http.HttpClient} with an
 *       {@code Authenticator} does) is captured as the operation's answer and stored (a 4xx), so
 *       the same request resent with credentials is replayed that 401, for the whole retention.</li>
 * </ul>
 * (And no principal is ever set when the guard reads it: every caller would be "anonymous".)
 */
class AuthenticatorContextTest {
  private final AtomicInteger runs = new AtomicInteger();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(store).purgeInterval(null).build();
  private final HttpClient http = HttpClient.newHttpClient();
  private ExecutorService executor;
  private HttpServer server;
  private URI base;

  @BeforeEach
  void start() throws Exception {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    executor = Executors.newFixedThreadPool(4);
    server.setExecutor(executor);
    HttpContext orders = server.createContext("/orders", exchange -> {
      exchange.getRequestBody().readAllBytes();
      byte[] body = ("{\"order\":" + runs.incrementAndGet() + ",\"owner\":\"" + exchange.getPrincipal().getUsername()
          + "\",\"card\":\"4242\"}").getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(201, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    orders.setAuthenticator(new BasicAuthenticator("shop") {
      @Override
      public boolean checkCredentials(String user, String password) {
        return "alice".equals(user) && "alice-pw".equals(password);
      }
    });
    orders.getFilters().add(new IdempotencyHttpFilter(guard)); // as the class Javadoc shows
    server.start();
    base = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  @AfterEach
  void stop() {
    server.stop(0);
    executor.shutdownNow();
    guard.close();
  }

  private HttpRequest order(String authorization) {
    HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve("/orders")).header("Idempotency-Key", "k-1")
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A1\"}"));
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    return b.build();
  }

  private static final String ALICE =
      "Basic " + Base64.getEncoder().encodeToString("alice:alice-pw".getBytes(StandardCharsets.UTF_8));

  @Test
  void aKeyedOrderOnAContextWithAnAuthenticatorIsRefusedWithoutAClaimOrARun() throws Exception {
    HttpResponse<String> first = http.send(order(ALICE), HttpResponse.BodyHandlers.ofString());
    assertEquals(500, first.statusCode(), first.body());
    HttpResponse<String> challenged = http.send(order(null), HttpResponse.BodyHandlers.ofString());
    assertEquals(500, challenged.statusCode(), "no 401 challenge is stored as the order's answer");
    HttpResponse<String> again = http.send(order(ALICE), HttpResponse.BodyHandlers.ofString());
    assertEquals(500, again.statusCode());
    assertEquals(0, runs.get(), "the handler never ran");
    assertEquals(0, store.records(RecordQuery.all(), java.time.Instant.now()).records().size(), "nothing claimed");
  }

  @Test
  void authenticatingInAFilterBeforeTheGuardScopesKeysByTheCallerItFound() throws Exception {
    server.removeContext("/orders");
    HttpContext orders = server.createContext("/orders", exchange -> {
      exchange.getRequestBody().readAllBytes();
      byte[] body = ("{\"order\":" + runs.incrementAndGet() + "}").getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(201, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    orders.getFilters().add(new com.sun.net.httpserver.Filter() {
      @Override
      public void doFilter(com.sun.net.httpserver.HttpExchange exchange, Chain chain) throws java.io.IOException {
        if (!ALICE.equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
          exchange.sendResponseHeaders(401, -1);
          exchange.close();
          return;
        }
        exchange.setAttribute("caller", "alice");
        chain.doFilter(exchange);
      }

      @Override
      public String description() {
        return "basic auth";
      }
    });
    orders.getFilters().add(new IdempotencyHttpFilter(guard, e -> (String) e.getAttribute("caller")));
    assertEquals(401, http.send(order(null), HttpResponse.BodyHandlers.ofString()).statusCode());
    HttpResponse<String> first = http.send(order(ALICE), HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> retry = http.send(order(ALICE), HttpResponse.BodyHandlers.ofString());
    assertEquals(201, first.statusCode());
    assertEquals(201, retry.statusCode());
    assertEquals(first.body(), retry.body());
    assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
    assertEquals(1, runs.get());
    assertEquals("alice", store.records(RecordQuery.all(), java.time.Instant.now()).records().get(0).id().caller());
  }
}
