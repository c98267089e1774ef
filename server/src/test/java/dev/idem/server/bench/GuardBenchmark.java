package dev.idem.server.bench;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.idem.jdbc.support.PostgresCluster;
import dev.idem.server.spi.Admission;
import dev.idem.server.CapturedResponse;
import dev.idem.server.GuardRequest;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.jdkhttp.IdempotencyHttpFilter;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The guard's overhead per request over a bare handler: a program, not a test. Run with
 * {@code mvn -B -q -pl server -am test-compile -Pbench-guard}.
 *
 * <p>Two measurements, each against a bare baseline taken in the same run:
 * <ol>
 *   <li>In process: the guard's admit plus complete around a handler that builds a small JSON
 *       reply, against that handler alone. This is the guard's own CPU and store cost.</li>
 *   <li>Over HTTP on loopback: a JDK HttpServer (with {@code sun.net.httpserver.nodelay}) serving
 *       POST /orders, bare and behind {@link IdempotencyHttpFilter}, driven by java.net.http from 1
 *       and from 8 threads, a fresh key per request (a claim and a completion each).</li>
 * </ol>
 * Stores: in memory, SQLite, and PostgreSQL (a throwaway cluster, when the Debian binaries are installed).
 * {@code -Dbench.cost=http} runs only the HTTP rows of the in-memory and SQLite stores;
 * {@code -Dbench.costOnly=true} only the CPU and allocation per request on the request threads.
 */
public final class GuardBenchmark {
  private static final byte[] ORDER = "{\"cart\":\"c-1\",\"amount\":4200,\"currency\":\"EUR\"}".getBytes(StandardCharsets.UTF_8);
  private static final AtomicLong KEYS = new AtomicLong();

  private GuardBenchmark() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("sun.net.httpserver.nodelay", "true");
    int n = Integer.getInteger("bench.requests", 4000);
    if (System.getProperty("bench.cost", "").equals("http")) {
      // Only the HTTP rows with the in-memory and SQLite stores, for an A/B of the server's classes.
      httpRows(n);
      return;
    }
    System.out.println("Guard overhead benchmark: " + n + " requests per measurement, after as many to warm up; "
        + Runtime.getRuntime().availableProcessors() + " cores, load average " + load());

    if (!System.getProperty("bench.cost", "").equals("http")) {
      costs(n);
    }
    if (Boolean.getBoolean("bench.costOnly")) {
      return;
    }

    double bareInProcess = inProcess(null, n);
    System.out.printf("in process, bare handler:           %8.2f us/request%n", bareInProcess);
    try (InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore(1_000_000)) {
      double g = inProcess(memory, n);
      System.out.printf("in process, guard + memory store:   %8.2f us/request  (+%.2f us)%n", g, g - bareInProcess);
    }

    Http bare = httpRows(n);

    Optional<Path> pgBin = PostgresCluster.findBinaries();
    if (pgBin.isEmpty()) {
      System.out.println("PostgreSQL: binaries not found under /usr/lib/postgresql; skipped");
      return;
    }
    postgres(pgBin.get(), n, bareInProcess, bare);
    System.out.println("load average at the end: " + load());
  }

  /**
   * CPU and allocation per request on the server's request threads, bare and behind the guard, in
   * memory and on SQLite: counts that other processes on the machine do not disturb.
   */
  private static void costs(int n) throws Exception {
    String only = System.getProperty("bench.cost", "");
    if (only.equals("sqlite")) {
      costSqlite(n, new GuardCost.Cost(0, 0));
      return;
    }
    if (only.equals("memory")) {
      try (InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore(1_000_000)) {
        costLine("request threads, guard + memory:    ", GuardCost.measure(memory, n), new GuardCost.Cost(0, 0));
      }
      return;
    }
    GuardCost.Cost bare = GuardCost.measure(null, n);
    System.out.printf("request threads, bare:              %8.1f us CPU, %8.0f bytes allocated per request%n",
        bare.cpuMicros(), bare.allocatedBytes());
    try (InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore(1_000_000)) {
      costLine("request threads, guard + memory:    ", GuardCost.measure(memory, n), bare);
    }
    costSqlite(n, bare);
  }

  private static void costSqlite(int n, GuardCost.Cost bare) throws Exception {
    Path dir = java.nio.file.Files.createTempDirectory("idem-guard-bench");
    try (JdbcIdempotencyStore sqlite = JdbcIdempotencyStore.sqlite(dir.resolve("guard.db"))) {
      costLine("request threads, guard + SQLite:    ", GuardCost.measure(sqlite, n), bare);
    } finally {
      deleteTree(dir);
    }
  }

  /** The HTTP rows of the bare handler and the guard with the in-memory and SQLite stores; the bare one. */
  private static Http httpRows(int n) throws Exception {
    Path dir = java.nio.file.Files.createTempDirectory("idem-guard-bench");
    try (InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore(1_000_000);
        JdbcIdempotencyStore sqlite = JdbcIdempotencyStore.sqlite(dir.resolve("guard.db"))) {
      Http[] r = interleaved(n, null, memory, sqlite);
      System.out.printf("HTTP, bare:                         %8.1f us/request (1 thread), %7.0f requests/s (8 threads)%n",
          r[0].latencyUs, r[0].throughput);
      report("HTTP, guard + memory store:        ", r[1], r[0]);
      report("HTTP, guard + SQLite store:        ", r[2], r[0]);
      return r[0];
    } finally {
      deleteTree(dir);
    }
  }

  private static void deleteTree(Path dir) throws java.io.IOException {
    try (var files = java.nio.file.Files.list(dir)) {
      for (Path f : files.toList()) {
        java.nio.file.Files.deleteIfExists(f);
      }
    }
    java.nio.file.Files.deleteIfExists(dir);
  }

  private static void costLine(String label, GuardCost.Cost c, GuardCost.Cost bare) {
    System.out.printf("%s %8.1f us CPU, %8.0f bytes allocated per request (+%.1f us, +%.0f bytes)%n", label,
        c.cpuMicros(), c.allocatedBytes(), c.cpuMicros() - bare.cpuMicros(), c.allocatedBytes() - bare.allocatedBytes());
  }

  private static void postgres(Path pgBin, int n, double bareInProcess, Http bare) throws Exception {
    try (PostgresCluster cluster = PostgresCluster.start(pgBin)) {
      String db = cluster.createDatabase();
      @SuppressWarnings("deprecation")
      org.postgresql.ds.PGPoolingDataSource pool = new org.postgresql.ds.PGPoolingDataSource();
      pool.setServerNames(new String[] {"127.0.0.1"});
      pool.setPortNumbers(new int[] {cluster.port()});
      pool.setDatabaseName(db);
      pool.setUser("postgres");
      pool.setMaxConnections(16);
      pool.setDataSourceName("idem-guard-bench");
      try (JdbcIdempotencyStore pg = JdbcIdempotencyStore.postgres(pool)) {
        double g = inProcess(pg, n);
        System.out.printf("in process, guard + PostgreSQL:     %8.2f us/request  (+%.2f us)%n", g, g - bareInProcess);
        Http[] r = interleaved(n, null, pg);
        System.out.printf("HTTP, bare (again, beside it):      %8.1f us/request (1 thread), %7.0f requests/s (8 threads)%n",
            r[0].latencyUs, r[0].throughput);
        report("HTTP, guard + PostgreSQL:          ", r[1], r[0]);
      } finally {
        pool.close();
      }
    }
  }

  private static String load() {
    try {
      return java.nio.file.Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (java.io.IOException | RuntimeException e) {
      return "unknown";
    }
  }

  private static void report(String label, Http h, Http bare) {
    System.out.printf("%s %8.1f us/request (1 thread) = %.2fx bare; %7.0f requests/s (8 threads) = %.2fx bare%n",
        label, h.latencyUs, h.latencyUs / bare.latencyUs, h.throughput, h.throughput / bare.throughput);
  }

  private static byte[] handler() {
    return ("{\"order\":" + KEYS.get() + "}").getBytes(StandardCharsets.UTF_8);
  }

  /** Microseconds per request, admit + handler + complete, or the handler alone when store is null. */
  private static double inProcess(IdempotencyStore store, int n) throws Exception {
    IdempotencyGuard guard = store == null ? null : IdempotencyGuard.builder(store).purgeInterval(null).build();
    try {
      long sink = 0;
      long start = 0;
      for (int round = 0; round < 2; round++) {
        start = System.nanoTime();
        for (int i = 0; i < n; i++) {
          if (guard == null) {
            sink += handler().length;
            continue;
          }
          GuardRequest r = new GuardRequest("POST", "/orders", null, "application/json",
              List.of("bench-" + KEYS.incrementAndGet()), "tenant", GuardRequest.BodyReader.of(ORDER));
          Admission.Proceed p = (Admission.Proceed) guard.admit(r);
          byte[] body = handler();
          guard.complete(p.claim(), new CapturedResponse(201, Map.of("Content-Type", List.of("application/json")), body));
          sink += body.length;
        }
      }
      if (sink == 42) {
        System.out.print("");
      }
      return (System.nanoTime() - start) / 1000.0 / n;
    } finally {
      if (guard != null) {
        guard.close();
      }
    }
  }

  private record Http(double latencyUs, double throughput) {}

  /**
   * Bare and guarded servers side by side, measured in alternating rounds (so load from other
   * processes and JIT warm-up hit both alike); the median round of each.
   */
  private static Http[] interleaved(int n, IdempotencyStore... stores) throws Exception {
    int rounds = 5;
    List<Server> servers = new ArrayList<>();
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    ExecutorService clients = Executors.newFixedThreadPool(8);
    try {
      for (IdempotencyStore store : stores) {
        servers.add(new Server(store));
      }
      for (Server s : servers) {
        send(client, s.uri, n); // warm-up
      }
      double[][] lat = new double[servers.size()][rounds];
      double[][] thr = new double[servers.size()][rounds];
      for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < servers.size(); i++) {
          URI uri = servers.get(i).uri;
          long t0 = System.nanoTime();
          send(client, uri, n / rounds);
          lat[i][round] = (System.nanoTime() - t0) / 1000.0 / (n / rounds);
          List<Future<?>> fs = new ArrayList<>();
          long t1 = System.nanoTime();
          for (int t = 0; t < 8; t++) {
            fs.add(clients.submit(() -> {
              send(client, uri, n / rounds / 2);
              return null;
            }));
          }
          for (Future<?> f : fs) {
            f.get();
          }
          thr[i][round] = 8.0 * (n / rounds / 2) / ((System.nanoTime() - t1) / 1e9);
        }
      }
      Http[] out = new Http[servers.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = new Http(median(lat[i]), median(thr[i]));
      }
      return out;
    } finally {
      clients.shutdownNow();
      servers.forEach(Server::close);
    }
  }

  private static double median(double[] xs) {
    double[] c = xs.clone();
    java.util.Arrays.sort(c);
    return c[c.length / 2];
  }

  /** POST /orders on a JDK HttpServer, bare (store null) or behind the guard. */
  private static final class Server implements AutoCloseable {
    final HttpServer http;
    final ExecutorService threads = Executors.newFixedThreadPool(8);
    final IdempotencyGuard guard;
    final URI uri;

    Server(IdempotencyStore store) throws java.io.IOException {
      http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
      http.setExecutor(threads);
      HttpHandler orders = exchange -> {
        exchange.getRequestBody().readAllBytes();
        byte[] body = handler();
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(201, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      };
      var context = http.createContext("/orders", orders);
      guard = store == null ? null : IdempotencyGuard.builder(store).purgeInterval(null).build();
      if (guard != null) {
        context.getFilters().add(new IdempotencyHttpFilter(guard));
      }
      http.start();
      uri = URI.create("http://127.0.0.1:" + http.getAddress().getPort() + "/orders");
    }

    @Override
    public void close() {
      http.stop(0);
      threads.shutdownNow();
      if (guard != null) {
        guard.close();
      }
    }
  }

  private static void send(HttpClient client, URI uri, int n) throws Exception {
    for (int i = 0; i < n; i++) {
      HttpRequest r = HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
          .header("Idempotency-Key", "bench-" + KEYS.incrementAndGet())
          .POST(HttpRequest.BodyPublishers.ofByteArray(ORDER)).build();
      HttpResponse<Void> response = client.send(r, HttpResponse.BodyHandlers.discarding());
      if (response.statusCode() != 201) {
        throw new IllegalStateException("unexpected status " + response.statusCode());
      }
    }
  }
}
