package dev.idem.server.servlet;

import com.sun.net.httpserver.HttpServer;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.CapturedResponse;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.RecordId;
import dev.idem.server.jdkhttp.IdempotencyHttpFilter;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.StoredResponse;
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
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * A child JVM for {@link StoreDownLogTest}: both filters in front of a store that is down, each sent
 * {@code args[0]} keyed requests; prints the statuses they answered. With {@code args[1]} =
 * {@code "complete"} the store claims but takes no result, and a transactional route of the JDK
 * filter, whose DataSource gives no connection, is sent as many too. Its log (slf4j-simple, to
 * stderr) is what the test reads.
 */
public final class StoreDownLogChild {
  private StoreDownLogChild() {}

  public static void main(String[] args) throws Exception {
    int requests = Integer.parseInt(args[0]);
    boolean completeFails = args.length > 1 && args[1].equals("complete");
    IdempotencyGuard guard = IdempotencyGuard.builder(completeFails ? new ForwardingStore() {
      @Override
      public boolean complete(RecordId id, long generation, String owner, Instant now, StoredResponse response,
          Instant expiresAt) {
        throw new IdempotencyStoreException("store down", null);
      }
    } : new ForwardingStore() {
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
    DataSource down = (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(),
        new Class<?>[] {DataSource.class}, (proxy, method, arguments) -> {
          throw new SQLException("connection refused");
        });
    jdk.createContext("/tx", new IdempotencyHttpFilter(guard).inTransaction(down,
        (connection, claim, body) -> CapturedResponse.json(201, "{}")));
    jdk.start();
    TreeMap<Integer, Integer> statuses = new TreeMap<>();
    HttpClient http = HttpClient.newHttpClient();
    try (PlainAndGuardedJetty jetty = PlainAndGuardedJetty.start(ok, guard)) {
      List<URI> uris = new ArrayList<>(List.of(jetty.base.resolve("guarded/orders"),
          URI.create("http://127.0.0.1:" + jdk.getAddress().getPort() + "/orders")));
      if (completeFails) {
        uris.add(URI.create("http://127.0.0.1:" + jdk.getAddress().getPort() + "/tx"));
      }
      for (URI uri : uris) {
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
