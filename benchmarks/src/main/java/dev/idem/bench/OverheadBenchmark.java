package dev.idem.bench;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Idem's own CPU and heap allocation per keyed call, without a socket: the same OkHttp POST as the end-to-end rows, but
 * answered 201 by a last interceptor in the client, so that what is left is OkHttp's call machinery
 * (raw) or that plus Idem's interceptor, fingerprint, in-memory journal and bookkeeping (Idem). The
 * figure is the calling thread's CPU time per call, which a machine shared with other work inflates
 * far less than wall time; the difference between the two rows is what Idem adds to every call.
 *
 * <p>Run by {@code mvn -B -q -pl benchmarks -am test-compile -Pbench-overhead}; system properties:
 * {@code idem.bench.overhead.rounds} (9 measured rounds, alternating the rows),
 * {@code idem.bench.overhead.warmupRounds} (5 rounds first, not counted: on a loaded machine the JIT
 * takes tens of seconds to compile Idem's path, and the rounds before show the interpreter),
 * {@code idem.bench.overhead.millis} (2000 per row and round), {@code idem.bench.overhead.evictKiB} (0:
 * before each call of either row, write one byte in every 64 of an array this large, so that each
 * call starts with the processor's caches holding that array instead of the last call's code and
 * data, as a call over a real socket does after the kernel, the other threads and the wait; the
 * walk's own CPU is in both rows, so Idem's difference holds only what its work costs from cold).
 */
public final class OverheadBenchmark {
  private OverheadBenchmark() {
  }

  /**
   * Runs the rounds and prints the medians and their difference.
   *
   * @param args none
   * @throws Exception if a call fails
   */
  public static void main(String[] args) throws Exception {
    int rounds = Integer.getInteger("idem.bench.overhead.rounds", 9);
    long millis = Long.getLong("idem.bench.overhead.millis", 2000);
    int warmupRounds = Integer.getInteger("idem.bench.overhead.warmupRounds", 5);
    int evictKiB = Integer.getInteger("idem.bench.overhead.evictKiB", 0);
    byte[] evict = new byte[Math.max(0, evictKiB) * 1024];
    Interceptor answer = chain -> new Response.Builder().request(chain.request()).protocol(Protocol.HTTP_1_1)
        .code(201).message("Created").header("Content-Type", "application/json")
        .body(ResponseBody.create(new byte[] {'{', '}'}, Strategies.JSON)).build();
    OkHttpClient raw = new OkHttpClient.Builder().addInterceptor(answer).build();
    double[] rawCpu = new double[rounds];
    double[] idemCpu = new double[rounds];
    double[] rawBytes = new double[rounds];
    double[] idemBytes = new double[rounds];
    System.out.printf(Locale.ROOT, "Idem overhead benchmark: %d rounds (after %d of warm-up) x %d ms per row;"
        + " caches evicted before each call by %d KiB; load average at start: %s%n", rounds, warmupRounds, millis,
        evict.length / 1024, Stats.loadAverage());
    for (int r = -warmupRounds; r < rounds; r++) {
      // A fresh journal each round, as in the end-to-end rows.
      IdemOkHttp idem = IdemOkHttp.builder(IdempotentExecutor.builder().journal(new InMemoryJournal()).build()).build();
      OkHttpClient withIdem = new OkHttpClient.Builder().addInterceptor(idem.interceptor()).addInterceptor(answer)
          .retryOnConnectionFailure(false).build();
      double[] a = perCall(raw, false, millis, evict);
      double[] b = perCall(withIdem, true, millis, evict);
      if (r >= 0) {
        rawCpu[r] = a[0];
        idemCpu[r] = b[0];
        rawBytes[r] = a[1];
        idemBytes[r] = b[1];
        System.out.printf(Locale.ROOT, "round %d: raw %.2f µs, %.0f B; Idem %.2f µs, %.0f B of CPU and heap per"
            + " call%n", r, a[0], a[1], b[0], b[1]);
      }
    }
    double[] diff = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      diff[r] = idemCpu[r] - rawCpu[r];
    }
    System.out.printf(Locale.ROOT, "RESULT raw %.2f µs, Idem %.2f µs of CPU per call (medians); Idem adds %.2f µs"
            + " (median of per-round differences); load average at end: %s%n", Stats.median(rawCpu),
        Stats.median(idemCpu), Stats.median(diff), Stats.loadAverage());
    // Allocation counts are exact and independent of the machine's load, unlike CPU time.
    System.out.printf(Locale.ROOT, "RESULT heap allocated per call (medians): raw %.0f B, Idem %.0f B; Idem adds"
        + " %.0f B%n", Stats.median(rawBytes), Stats.median(idemBytes),
        Stats.median(idemBytes) - Stats.median(rawBytes));
  }

  /** The calling thread's CPU µs and heap bytes allocated per call. */
  private static double[] perCall(OkHttpClient client, boolean keyed, long millis, byte[] evict) throws Exception {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    com.sun.management.ThreadMXBean heap = (com.sun.management.ThreadMXBean) mx;
    long end = System.nanoTime() + millis * 1_000_000L;
    long calls = 0;
    long bytes = heap.getCurrentThreadAllocatedBytes();
    long cpu = mx.getCurrentThreadCpuTime();
    while (System.nanoTime() < end) {
      for (int i = 0; i < evict.length; i += 64) {
        evict[i]++;
      }
      Request.Builder b = new Request.Builder().url("http://127.0.0.1:8080/orders")
          .post(RequestBody.create(Strategies.BODY, Strategies.JSON));
      if (keyed) {
        b.tag(IdempotentOperation.class, IdempotentOperation.of("create-order"));
      }
      try (Response response = client.newCall(b.build()).execute()) {
        response.body().bytes();
        if (response.code() != 201) {
          throw new IllegalStateException("expected 201, got " + response.code());
        }
      }
      calls++;
    }
    long cpuUsed = mx.getCurrentThreadCpuTime() - cpu;
    long allocated = heap.getCurrentThreadAllocatedBytes() - bytes;
    return new double[] {cpuUsed / 1_000.0 / calls, (double) allocated / calls};
  }
}
