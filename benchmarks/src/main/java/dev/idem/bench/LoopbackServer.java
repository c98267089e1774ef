package dev.idem.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A JDK HttpServer on loopback that answers 201 with a small JSON body to every POST, and counts
 * what it saw. It does nothing per request beyond that, so that the benchmark measures the client.
 *
 * <p>Start the JVM with {@code -Dsun.net.httpserver.nodelay=true} (or call {@link #requireNoDelay}
 * before the first server is created): without it every POST waits about 40 ms for Nagle's
 * algorithm and the delayed ACK, and the benchmark would measure that. Thread-safe.
 */
final class LoopbackServer implements AutoCloseable {
  static final String KEY_HEADER = "Idempotency-Key";
  private static final byte[] CREATED = "{\"id\":\"ord_1\",\"status\":\"created\"}".getBytes(StandardCharsets.UTF_8);

  private final HttpServer server;
  private final ExecutorService workers;
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong keyed = new AtomicLong();
  /** Keys are remembered only when asked for (the smoke test), so that a long run stays flat in memory. */
  private final Set<String> keys;

  private LoopbackServer(boolean rememberKeys, int workerThreads) throws IOException {
    this.keys = rememberKeys ? ConcurrentHashMap.newKeySet() : null;
    this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 512);
    this.workers = Executors.newFixedThreadPool(workerThreads, r -> {
      Thread t = new Thread(r, "loopback-server");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(workers);
    server.createContext("/orders", this::handle);
    server.start();
  }

  /**
   * Starts a server on an ephemeral loopback port.
   *
   * @param rememberKeys whether to keep every distinct key seen (tests only: unbounded)
   * @param workerThreads threads that run the handler
   */
  static LoopbackServer start(boolean rememberKeys, int workerThreads) throws IOException {
    return new LoopbackServer(rememberKeys, workerThreads);
  }

  /** Sets the JDK server's no-delay property unless the command line did; must run before the first start. */
  static boolean requireNoDelay() {
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
    return Boolean.getBoolean("sun.net.httpserver.nodelay");
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange; InputStream in = exchange.getRequestBody()) {
      in.transferTo(OutputStream.nullOutputStream());
      requests.incrementAndGet();
      String key = exchange.getRequestHeaders().getFirst(KEY_HEADER);
      if (key != null) {
        keyed.incrementAndGet();
        if (keys != null) {
          keys.add(key);
        }
      }
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(201, CREATED.length);
      exchange.getResponseBody().write(CREATED);
    }
  }

  URI url() {
    InetSocketAddress a = server.getAddress();
    return URI.create("http://" + a.getAddress().getHostAddress() + ":" + a.getPort() + "/orders");
  }

  long requests() {
    return requests.get();
  }

  long keyedRequests() {
    return keyed.get();
  }

  /** The distinct keys seen; only if started with {@code rememberKeys}. */
  Set<String> keys() {
    if (keys == null) {
      throw new IllegalStateException("started without rememberKeys");
    }
    return Set.copyOf(keys);
  }

  @Override
  public void close() {
    server.stop(0);
    workers.shutdown();
    try {
      workers.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
