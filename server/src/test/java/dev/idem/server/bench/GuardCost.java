package dev.idem.server.bench;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.jdkhttp.IdempotencyHttpFilter;
import dev.idem.server.spi.IdempotencyStore;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a guarded request costs the server's request threads, against the bare handler: CPU
 * microseconds and bytes allocated per request, read from the threads themselves
 * ({@link com.sun.management.ThreadMXBean}), so neither the client nor other processes on the
 * machine count. Counts, not timings: steady under load from other builds.
 */
final class GuardCost {
  private static final byte[] ORDER = "{\"cart\":\"c-1\",\"amount\":4200,\"currency\":\"EUR\"}"
      .getBytes(StandardCharsets.UTF_8);
  private static final AtomicLong KEYS = new AtomicLong();
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private GuardCost() {}

  /** CPU and allocation per request on the server's request threads. */
  record Cost(double cpuMicros, double allocatedBytes) {}

  /** Serves POST /orders, bare (store null) or behind the guard, and measures {@code n} requests from one thread. */
  static Cost measure(IdempotencyStore store, int n) throws Exception {
    List<Thread> workers = new CopyOnWriteArrayList<>();
    ExecutorService threads = Executors.newFixedThreadPool(8, r -> {
      Thread t = new Thread(r, "guard-cost");
      t.setDaemon(true);
      workers.add(t);
      return t;
    });
    HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    http.setExecutor(threads);
    HttpHandler orders = exchange -> {
      exchange.getRequestBody().readAllBytes();
      byte[] body = ("{\"order\":" + KEYS.get() + "}").getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(201, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    };
    var context = http.createContext("/orders", orders);
    IdempotencyGuard guard = store == null ? null : IdempotencyGuard.builder(store).purgeInterval(null).build();
    if (guard != null) {
      context.getFilters().add(new IdempotencyHttpFilter(guard));
    }
    http.start();
    URI uri = URI.create("http://127.0.0.1:" + http.getAddress().getPort() + "/orders");
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    try {
      send(client, uri, n); // warm-up
      long cpu0 = 0;
      long bytes0 = 0;
      for (Thread t : workers) {
        cpu0 += THREADS.getThreadCpuTime(t.getId());
        bytes0 += THREADS.getThreadAllocatedBytes(t.getId());
      }
      int threadsBefore = workers.size();
      send(client, uri, n);
      long cpu = 0;
      long bytes = 0;
      for (Thread t : workers) {
        cpu += THREADS.getThreadCpuTime(t.getId());
        bytes += THREADS.getThreadAllocatedBytes(t.getId());
      }
      if (workers.size() != threadsBefore) {
        throw new IllegalStateException("the server started threads during the measurement");
      }
      return new Cost((cpu - cpu0) / 1000.0 / n, (bytes - bytes0) / (double) n);
    } finally {
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
