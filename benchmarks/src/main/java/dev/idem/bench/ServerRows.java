package dev.idem.bench;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.support.PostgresCluster;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.jdkhttp.IdempotencyHttpFilter;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.JdkWebhookHandler;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookSource;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * The server side's rows (G1, W1): each row is a JDK HttpServer of its own on loopback, with
 * {@link #SERVER_THREADS} handler threads, that OkHttp drives through {@link Load} like the client
 * rows. The guard rows put {@link IdempotencyHttpFilter} in front of the same small JSON handler as
 * the bare row, a fresh {@code Idempotency-Key} per request (a claim and a completion each); the
 * webhook rows send a Standard Webhooks delivery, signed per request with a fresh id, either to a
 * bare handler that answers 200 or to {@link JdkWebhookHandler} (verify, then a durable accept into
 * the SQLite inbox). Signing happens on the client for both, so it is not counted against Idem.
 */
final class ServerRows {
  /** Handler threads of every server row (the guard's own benchmark and the webhook guide use 8). */
  static final int SERVER_THREADS = 8;
  static final String BARE = "bare handler";
  static final String GUARD_MEMORY = "guard, in-memory store";
  static final String GUARD_SQLITE = "guard, SQLite store";
  static final String GUARD_POSTGRES = "guard, PostgreSQL store";
  static final String WEBHOOK_BARE = "bare 2xx webhook handler";
  static final String WEBHOOK_INBOX = "verified webhook into the SQLite inbox";
  static final String GUARD_FLOOR = "the floor: bare handler + its answer committed to SQLite (group commit, no Idem code)";
  static final String WEBHOOK_FLOOR = "the floor: bare 2xx handler + the body committed to SQLite first (group commit,"
      + " no Idem code)";

  private static final byte[] ORDER = "{\"cart\":\"c-1\",\"amount\":4200,\"currency\":\"EUR\"}"
      .getBytes(StandardCharsets.UTF_8);
  private static final MediaType JSON = MediaType.get("application/json");
  private static final String SECRET = "whsec_aWRlbS10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm";
  private static final AtomicLong IDS = new AtomicLong();

  private ServerRows() {
  }

  /** The bare handler the guard rows wrap: reads the body, answers 201 with a small JSON body. */
  static Strategy bare(OkHttpClient client) {
    return strategy(BARE, dir -> guarded(client, null));
  }

  static Strategy guardInMemory(OkHttpClient client) {
    return strategy(GUARD_MEMORY, dir -> guarded(client, new InMemoryIdempotencyStore(1_000_000)));
  }

  /**
   * The least a guard's durable store costs, with no Idem code ({@link GroupCommitFloor}): the bare
   * handler's answer committed under its key before it is sent, which is the one durable write per
   * request the guard's SQLite store makes (its claim rides on the next commit).
   */
  static Strategy guardFloor(OkHttpClient client) {
    return strategy(GUARD_FLOOR, dir -> {
      GroupCommitFloor floor = GroupCommitFloor.open(dir.resolve("floor.db"));
      return served(client, Served.start("/orders", orders(floor), null), floor);
    });
  }

  static Strategy guardSqlite(OkHttpClient client) {
    return strategy(GUARD_SQLITE, dir -> guarded(client, JdbcIdempotencyStore.sqlite(dir.resolve("guard.db"))));
  }

  /** A guard on a database of the given cluster; each run gets a database of its own. */
  static Strategy guardPostgres(OkHttpClient client, PostgresCluster cluster) {
    return strategy(GUARD_POSTGRES, dir -> {
      HikariConfig config = new HikariConfig();
      config.setDataSource(cluster.dataSource(cluster.createDatabase()));
      config.setMaximumPoolSize(SERVER_THREADS * 2);
      config.setPoolName("idem-bench-guard");
      HikariDataSource pool = new HikariDataSource(config);
      return closing(guarded(client, JdbcIdempotencyStore.postgres(pool)), pool);
    });
  }

  static Strategy webhookBare(OkHttpClient client) {
    return strategy(WEBHOOK_BARE, dir -> webhook(client, null, exchange -> {
      try (exchange) {
        exchange.getRequestBody().readAllBytes();
        exchange.sendResponseHeaders(200, -1);
      }
    }));
  }

  /**
   * The least a durable inbox costs, with no Idem code ({@link GroupCommitFloor}): the delivery's
   * body committed under its id before the 2xx, without verifying it.
   */
  static Strategy webhookFloor(OkHttpClient client) {
    return strategy(WEBHOOK_FLOOR, dir -> {
      GroupCommitFloor floor = GroupCommitFloor.open(dir.resolve("floor.db"));
      Strategy.Session s = webhook(client, null, exchange -> {
        try (exchange) {
          byte[] body = exchange.getRequestBody().readAllBytes();
          floor.write(exchange.getRequestHeaders().getFirst("webhook-id"), new String(body, StandardCharsets.UTF_8),
              "RECEIVED", true);
          exchange.sendResponseHeaders(200, -1);
        }
      });
      return closing(s, floor);
    });
  }

  static Strategy webhookInbox(OkHttpClient client) {
    return strategy(WEBHOOK_INBOX, dir -> {
      WebhookInbox inbox = WebhookInbox.sqlite(dir.resolve("inbox")).open();
      WebhookSource source = WebhookSource.builder("provider", SignatureScheme.standardWebhooks()).secret(SECRET)
          .build();
      return webhook(client, inbox, new JdkWebhookHandler(WebhookReceiver.builder(source, inbox).build()));
    });
  }

  /** POSTs an order with a fresh key to {@code served}, expecting 201; closes {@code closeAfter} after it. */
  private static Strategy.Session served(OkHttpClient client, Served served, AutoCloseable closeAfter) {
    String url = served.uri.toString();
    Strategy.Session s = new Strategy.Session() {
      @Override
      public void call() throws IOException {
        Request r = new Request.Builder().url(url).header(LoopbackServer.KEY_HEADER, "bench-" + IDS.incrementAndGet())
            .post(RequestBody.create(ORDER, JSON)).build();
        expect(client, r, 201);
      }

      @Override
      public void close() {
        served.close();
      }
    };
    return closing(s, closeAfter);
  }

  /** {@code session}, which also closes {@code after} once it closed. */
  private static Strategy.Session closing(Strategy.Session session, AutoCloseable after) {
    return new Strategy.Session() {
      @Override
      public void call() throws Exception {
        session.call();
      }

      @Override
      public void close() throws IOException {
        try {
          session.close();
        } finally {
          try {
            after.close();
          } catch (IOException | RuntimeException e) {
            throw e;
          } catch (Exception e) {
            throw new IOException(e);
          }
        }
      }
    };
  }

  private static Strategy.Session guarded(OkHttpClient client, IdempotencyStore store) throws IOException {
    IdempotencyGuard guard = store == null ? null : IdempotencyGuard.builder(store).purgeInterval(null).build();
    Served served = Served.start("/orders", orders(null), guard == null ? null : new IdempotencyHttpFilter(guard));
    return served(client, served, () -> {
      if (guard != null) {
        guard.close();
      }
      if (store != null) {
        store.close();
      }
    });
  }

  /**
   * The order handler every guard row serves: reads the body, answers 201 with a small JSON body;
   * with a floor, commits that answer under the request's key before sending it.
   */
  private static HttpHandler orders(GroupCommitFloor floor) {
    return exchange -> {
      exchange.getRequestBody().readAllBytes();
      byte[] body = ("{\"order\":" + IDS.incrementAndGet() + "}").getBytes(StandardCharsets.UTF_8);
      if (floor != null) {
        floor.write(exchange.getRequestHeaders().getFirst(LoopbackServer.KEY_HEADER),
            new String(body, StandardCharsets.UTF_8), "COMPLETED", true);
      }
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(201, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    };
  }

  private static Strategy.Session webhook(OkHttpClient client, WebhookInbox inbox, HttpHandler handler)
      throws IOException {
    Served served = Served.start("/webhooks", handler, null);
    String url = served.uri.toString();
    return new Strategy.Session() {
      @Override
      public void call() throws IOException {
        String id = "msg_" + IDS.incrementAndGet();
        byte[] body = WebhookSigner.jsonEvent("evt_" + id, "invoice.paid", "{\"invoice\":\"in_42\",\"amount\":1299}");
        WebhookDelivery d = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, id, "invoice.paid", Instant.now(), body);
        Request.Builder r = new Request.Builder().url(url).post(RequestBody.create(d.body(), JSON));
        for (Map.Entry<String, String> h : d.headers().entrySet()) {
          if (!h.getKey().equalsIgnoreCase("Content-Type")) {
            r.header(h.getKey(), h.getValue());
          }
        }
        expect(client, r.build(), 200);
      }

      @Override
      public void close() {
        served.close();
        if (inbox != null) {
          inbox.close();
        }
      }
    };
  }

  private static void expect(OkHttpClient client, Request request, int status) throws IOException {
    try (Response response = client.newCall(request).execute()) {
      response.body().bytes();
      if (response.code() != status) {
        throw new IOException("expected " + status + ", got " + response.code() + " from " + request.url());
      }
    }
  }

  /** One JDK HttpServer serving one context, optionally behind a filter. */
  private static final class Served implements AutoCloseable {
    final HttpServer http;
    final ExecutorService threads;
    final URI uri;

    private Served(HttpServer http, ExecutorService threads, URI uri) {
      this.http = http;
      this.threads = threads;
      this.uri = uri;
    }

    static Served start(String path, HttpHandler handler, com.sun.net.httpserver.Filter filter) throws IOException {
      HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 512);
      ExecutorService threads = Executors.newFixedThreadPool(SERVER_THREADS, r -> {
        Thread t = new Thread(r, "bench-server-row");
        t.setDaemon(true);
        return t;
      });
      http.setExecutor(threads);
      var context = http.createContext(path, handler);
      if (filter != null) {
        context.getFilters().add(filter);
      }
      http.start();
      InetSocketAddress a = http.getAddress();
      return new Served(http, threads, URI.create("http://" + a.getAddress().getHostAddress() + ":" + a.getPort()
          + path));
    }

    @Override
    public void close() {
      http.stop(0);
      threads.shutdown();
      try {
        threads.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private interface Opener {
    Strategy.Session open(Path dir) throws Exception;
  }

  private static Strategy strategy(String label, Opener opener) {
    return new Strategy() {
      @Override
      public String label() {
        return label;
      }

      @Override
      public Session open(Path workDir) throws Exception {
        return opener.open(workDir);
      }
    };
  }
}
