package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.RecordId;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.spi.StoredRecord;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: the Access-Control-* and Vary headers set ahead of the guard survive the reset before a refused completion's 409.
 *
 * <p>Review finding on 50bb619f/384e3489 ("the guard's own answers carry the handler's CORS
 * allowance").
 *
 * <p>The Spring starter now sets the CORS headers on the container's response before the guard runs
 * ({@code GuardCors}), and docs/spring.md says a {@code CorsFilter} ahead of the guard does the same,
 * so that the guard's own answers (replay, 409, 422) carry {@code Access-Control-Allow-Origin}. But
 * when the handler's completion is refused (its lease lapsed during a long handler and another
 * request took the operation over), {@code IdempotencyFilter.finish} calls {@code response.reset()}
 * on the container's response before writing {@code refusedResponse()}, a 409 with
 * {@code Retry-After}: the reset drops every header set ahead of the guard, the CORS allowance
 * included. (Here a filter ahead of the guard sets it, as GuardCors or a CorsFilter does.)
 *
 * <p>Consequence: a browser front end gets that 409 without {@code Access-Control-Allow-Origin};
 * fetch() rejects it as a network error, the page never sees the 409 nor its Retry-After (the one
 * answer that says "another request holds it: retry for its result"), and the 409 is the one guard
 * answer of the three the docs promise that is still unreadable cross-origin.
 */
class RefusedCompletionKeepsCorsTest {
  private static final String SHOP = "https://shop.example";
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();
  private IdempotencyGuard guard;
  private Server server;
  private URI base;

  /** The store, where another instance takes the operation over (its lease lapsed) just before the completion. */
  private IdempotencyStore takenOverBeforeTheCompletion() {
    return (IdempotencyStore) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {IdempotencyStore.class}, (proxy, method, args) -> {
          if (method.getName().equals("complete")) {
            RecordId id = (RecordId) args[0];
            StoredRecord r = memory.find(id).orElseThrow();
            Instant later = r.leaseUntil().plusSeconds(1);
            if (!(memory.claim(id, r.fingerprint(), "other-instance/1", later, later.plusSeconds(30),
                later.plus(Duration.ofHours(24))) instanceof ClaimAttempt.Claimed)) {
              throw new AssertionError("the other instance did not take the lapsed claim over");
            }
          }
          try {
            return method.invoke(memory, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(takenOverBeforeTheCompletion()).purgeInterval(null).build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        resp.setContentType("application/json");
        resp.getWriter().print("{\"order\":1}");
      }
    }), "/*");
    // The CORS step ahead of the guard, as the starter's GuardCors or a CorsFilter ordered ahead sets it.
    Filter cors = (req, res, chain) -> {
      if (SHOP.equals(((HttpServletRequest) req).getHeader("Origin"))) {
        ((HttpServletResponse) res).setHeader("Access-Control-Allow-Origin", SHOP);
        ((HttpServletResponse) res).addHeader("Vary", "Origin");
      }
      chain.doFilter(req, res);
    };
    context.addFilter(new FilterHolder(cors), "/*", EnumSet.of(DispatcherType.REQUEST));
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard, r -> "alice")), "/*",
        EnumSet.of(DispatcherType.REQUEST));
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
  void theRefusedCompletions409KeepsTheCorsAllowanceSetAheadOfTheGuard() throws Exception {
    HttpResponse<String> answer = http.send(HttpRequest.newBuilder(base.resolve("orders"))
        .timeout(Duration.ofSeconds(10)).header("Origin", SHOP).header("Content-Type", "application/json")
        .header("Idempotency-Key", "k-cors-refused").POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A1\"}"))
        .build(), HttpResponse.BodyHandlers.ofString());

    assertEquals(409, answer.statusCode(), answer.body());
    assertEquals(SHOP, answer.headers().firstValue("Access-Control-Allow-Origin").orElse(null),
        "the 409 of a refused completion lost the CORS allowance set ahead of the guard (response.reset()), so a"
            + " browser cannot read it: " + answer.headers().map());
  }
}
