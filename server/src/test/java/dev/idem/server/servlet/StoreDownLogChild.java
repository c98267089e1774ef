package dev.idem.server.servlet;

import com.sun.net.httpserver.HttpServer;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.RecordId;
import dev.idem.server.jdkhttp.IdempotencyHttpFilter;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.support.ForwardingStore;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.TreeMap;

/**
 * A child JVM for {@link StoreDownLogTest}: both filters in front of a store that is down, each sent
 * {@code args[0]} keyed requests; prints the statuses they answered. Its log (slf4j-simple, to
 * stderr) is what the test reads.
 */
public final class StoreDownLogChild {
  private StoreDownLogChild() {}

  public static void main(String[] args) throws Exception {
    int requests = Integer.parseInt(args[0]);
    IdempotencyGuard guard = IdempotencyGuard.builder(new ForwardingStore() {
      @Override
      public ClaimAttempt claim(RecordId id, Fingerprint fingerprint, String owner, Instant now, Instant leaseUntil,
          Instant expiresAt) {
        throw new IdempotencyStoreException("store down", null);
      }
    }).build();
    HttpServlet ok = new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void doPost(HttpServletRequest req, HttpServletResponse resp) {
        resp.setStatus(201);
      }
    };
    HttpServer jdk = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
    jdk.createContext("/orders", exchange -> {
      exchange.getRequestBody().readAllBytes();
      exchange.sendResponseHeaders(201, -1);
      exchange.close();
    }).getFilters().add(new IdempotencyHttpFilter(guard));
    jdk.start();
    TreeMap<Integer, Integer> statuses = new TreeMap<>();
    HttpClient http = HttpClient.newHttpClient();
    try (PlainAndGuardedJetty jetty = PlainAndGuardedJetty.start(ok, guard)) {
      for (URI uri : new URI[] {jetty.base.resolve("guarded/orders"),
          URI.create("http://127.0.0.1:" + jdk.getAddress().getPort() + "/orders")}) {
        for (int i = 0; i < requests; i++) {
          HttpResponse<Void> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
              .header("Idempotency-Key", "k-" + i).POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
              HttpResponse.BodyHandlers.discarding());
          statuses.merge(r.statusCode(), 1, Integer::sum);
        }
      }
    } finally {
      jdk.stop(0);
      guard.close();
    }
    System.out.println("statuses " + statuses);
  }
}
