package dev.idem.server.jdkhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.net.httpserver.HttpServer;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.RecordId;
import dev.idem.server.internal.RateLimitedLog;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.support.CapturingLogger;
import dev.idem.server.support.ForwardingStore;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/**
 * Defect: the filters call {@code storeDown.succeeded()} after every {@code guard.admit} that did not
 * throw, also for requests the guard answered without touching the store: a GET without a key
 * (unguarded), a POST without a key (400). On a filter mapped on {@code /orders/*}, the ordinary GETs
 * of an ongoing outage log "requests succeed again" (a false recovery, while every keyed request is
 * still answered 503) and reset the log, so the next failure is logged with its full stack trace
 * again: each interval gets a false recovery WARN plus a stack trace instead of one summary line.
 * The filter's log is swapped (by reflection, on this instance only) for one on a settable clock and
 * a capturing logger; the filter passes the system clock and has no way to inject one.
 */
class ReviewStoreDownFalseRecoveryTest {
  private final CapturingLogger logger = new CapturingLogger();
  private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final HttpClient http = HttpClient.newHttpClient();
  private IdempotencyGuard guard;
  private HttpServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop(0);
    }
    if (guard != null) {
      guard.close();
    }
  }

  @Test
  void anUnkeyedGetDuringAnOutageDoesNotReportRecovery() throws Exception {
    guard = IdempotencyGuard.builder(new ForwardingStore() {
      @Override
      public ClaimAttempt claim(RecordId id, Fingerprint fingerprint, String owner, Instant now, Instant leaseUntil,
          Instant expiresAt) {
        throw new IdempotencyStoreException("store down", null);
      }
    }).build();
    IdempotencyHttpFilter filter = new IdempotencyHttpFilter(guard);
    Field f = IdempotencyHttpFilter.class.getDeclaredField("storeDown");
    f.setAccessible(true);
    f.set(filter, new RateLimitedLog(logger, "Idempotency store unavailable; answering 503",
        RateLimitedLog.DEFAULT_INTERVAL, clock));
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
    server.createContext("/orders", exchange -> {
      exchange.getRequestBody().readAllBytes();
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    }).getFilters().add(filter);
    server.start();

    assertEquals(503, post("k-1"));
    assertEquals(503, post("k-2"));
    clock.advance(Duration.ofSeconds(61));
    assertEquals(200, get(), "a GET without a key is unguarded");
    assertEquals(503, post("k-3"), "the store is still down");
    assertEquals(503, post("k-4"));

    List<CapturingLogger.Line> lines = logger.lines();
    String all = lines.stream().map(l -> l.level() + " " + l.message() + (l.throwable() == null ? "" : " +stack"))
        .collect(Collectors.joining("\n"));
    assertEquals(0, lines.stream().filter(l -> l.level() == Level.WARN).count(),
        "the store never came back, yet the log says it did:\n" + all);
    assertEquals(1, lines.stream().filter(l -> l.throwable() != null).count(),
        "one outage, one stack trace:\n" + all);
  }

  private int post(String key) throws Exception {
    return http.send(HttpRequest.newBuilder(uri()).timeout(Duration.ofSeconds(10)).header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private int get() throws Exception {
    return http.send(HttpRequest.newBuilder(uri()).timeout(Duration.ofSeconds(10)).GET().build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/orders/1");
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
