package dev.idem.bench;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;

/**
 * P4's baselines from a cold start, each in a JVM of its own started as {@link ResumeChild}'s is
 * ({@code -Xmx256m}), timed from its first call: {@code raw}, raw OkHttp making the given number of
 * POSTs of the benchmark's body (no key) on the given number of threads; {@code floor}, the same
 * calls with each one's key committed to SQLite first and its outcome after, with no Idem code
 * ({@link Strategies#durableFloor}, P3's floor). P4 divides a restarted process's resume by raw's
 * rate in a warm JVM; these say how much of that rate a cold JVM keeps on this machine, where the
 * JIT compiles the code while the calls run, without a durable write and with the one a resumed
 * operation's claim needs. Prints one {@code RESULT} line.
 *
 * <p>Arguments: {@code raw} or {@code floor}, server URL, call count, threads, and for
 * {@code floor} the directory of its database.
 */
public final class ColdStartChild {
  private ColdStartChild() {
  }

  /**
   * Makes the calls and prints the RESULT line.
   *
   * @param args {@code raw} or {@code floor}, server URL, call count, threads, the floor's directory
   * @throws Exception the first failed call: a baseline of failing calls measures nothing
   */
  public static void main(String[] args) throws Exception {
    String row = args[0];
    URI url = URI.create(args[1]);
    int count = Integer.parseInt(args[2]);
    int threads = Integer.parseInt(args[3]);
    OkHttpClient client = new OkHttpClient.Builder().retryOnConnectionFailure(false)
        .connectionPool(new ConnectionPool(threads + 8, 5, TimeUnit.MINUTES)).build();
    try {
      Strategy strategy = switch (row) {
        case "raw" -> Strategies.raw(client, url);
        case "floor" -> Strategies.durableFloor(client, url);
        default -> throw new IllegalArgumentException("raw or floor, not " + row);
      };
      Path dir = row.equals("floor") ? Files.createDirectories(Path.of(args[4])) : null;
      try (Strategy.Session session = strategy.open(dir)) {
        run(session, count, threads);
      }
    } finally {
      // Also on a failed call, so that OkHttp's threads do not keep this JVM (and the parent,
      // which waits for it) alive.
      client.connectionPool().evictAll();
      client.dispatcher().executorService().shutdown();
    }
  }

  private static void run(Strategy.Session session, int count, int threads) throws Exception {
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    AtomicLong next = new AtomicLong();
    AtomicReference<Exception> failure = new AtomicReference<>();
    List<Thread> workers = new ArrayList<>();
    long cpuStart = os.getProcessCpuTime();
    long start = System.nanoTime();
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(() -> {
        try {
          while (failure.get() == null && next.getAndIncrement() < count) {
            session.call();
          }
        } catch (Exception e) {
          failure.compareAndSet(null, e);
        }
      }, "cold-" + i);
      workers.add(t);
      t.start();
    }
    for (Thread t : workers) {
      t.join();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    long cpuNanos = os.getProcessCpuTime() - cpuStart;
    if (failure.get() != null) {
      throw failure.get();
    }
    System.out.printf(Locale.ROOT, "RESULT calls=%d seconds=%.2f callsPerSecond=%.0f cpuMicrosPerCall=%.0f%n", count,
        seconds, count / seconds, cpuNanos / 1e3 / count);
  }
}
