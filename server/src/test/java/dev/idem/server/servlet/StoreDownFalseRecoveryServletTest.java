package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.RecordId;
import dev.idem.server.internal.RateLimitedLog;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.support.CapturingLogger;
import dev.idem.server.support.ForwardingStore;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.EnumSet;
import java.util.List;
import java.util.stream.Collectors;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/**
 * The Servlet filter's side of ReviewStoreDownFalseRecoveryTest (the JDK filter's): during a store
 * outage, answers the guard gives without its store (an unkeyed GET, unguarded; an unkeyed POST,
 * 400) are no sign that the store is back, so they log no recovery and do not start the outage log
 * over with a fresh stack trace. The filter's log is swapped, on this instance only and by reflection
 * (the filter takes no clock), for one on a settable clock and a capturing logger.
 */
class StoreDownFalseRecoveryServletTest {
  private final CapturingLogger logger = new CapturingLogger();
  private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final HttpClient http = HttpClient.newHttpClient();
  private IdempotencyGuard guard;
  private Server server;
  private int port;

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
    if (guard != null) {
      guard.close();
    }
  }

  @Test
  void unkeyedRequestsDuringAnOutageDoNotReportRecovery() throws Exception {
    guard = IdempotencyGuard.builder(new ForwardingStore() {
      @Override
      public ClaimAttempt claim(RecordId id, Fingerprint fingerprint, String owner, Instant now, Instant leaseUntil,
          Instant expiresAt) {
        throw new IdempotencyStoreException("store down", null);
      }
    }).build();
    IdempotencyFilter filter = new IdempotencyFilter(guard);
    Field f = IdempotencyFilter.class.getDeclaredField("storeDown");
    f.setAccessible(true);
    f.set(filter, new RateLimitedLog(logger, "Idempotency store unavailable; answering 503",
        RateLimitedLog.DEFAULT_INTERVAL, clock));
    start(filter);

    assertEquals(503, post("k-1"));
    assertEquals(503, post("k-2"));
    clock.advance(Duration.ofSeconds(61));
    assertEquals(200, get(), "a GET without a key is unguarded");
    assertEquals(400, post(null), "a POST without a key is refused before the store");
    assertEquals(503, post("k-3"), "the store is still down");
    assertEquals(503, post("k-4"));
    clock.advance(Duration.ofSeconds(61));
    assertEquals(200, get());
    assertEquals(503, post("k-5"));

    List<CapturingLogger.Line> lines = logger.lines();
    String all = lines.stream().map(l -> l.level() + " " + l.message() + (l.throwable() == null ? "" : " +stack"))
        .collect(Collectors.joining("\n"));
    assertEquals(0, lines.stream().filter(l -> l.level() == Level.WARN).count(),
        "the store never came back, yet the log says it did:\n" + all);
    assertEquals(1, lines.stream().filter(l -> l.throwable() != null).count(), "one outage, one stack trace:\n" + all);
    assertEquals(3, lines.size(), "the first failure, then one summary per interval:\n" + all);
  }

  private void start(IdempotencyFilter filter) throws Exception {
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        req.getInputStream().readAllBytes();
        resp.setStatus(200);
      }
    }), "/*");
    context.addFilter(new FilterHolder(filter), "/orders/*", EnumSet.of(DispatcherType.REQUEST));
    server.setHandler(context);
    server.start();
    port = connector.getLocalPort();
  }

  private int post(String key) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri()).timeout(Duration.ofSeconds(10))
        .POST(HttpRequest.BodyPublishers.ofString("{}"));
    if (key != null) {
      b.header("Idempotency-Key", key);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private int get() throws Exception {
    return http.send(HttpRequest.newBuilder(uri()).timeout(Duration.ofSeconds(10)).GET().build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private URI uri() {
    return URI.create("http://127.0.0.1:" + port + "/orders/1");
  }

  private static final class SettableClock extends Clock {
    private volatile Instant now;

    SettableClock(Instant start) {
      this.now = start;
    }

    void advance(Duration d) {
      now = now.plus(d);
    }

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }
  }
}
