package dev.idem.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/** Runs a session's calls on a number of threads for a while, and says how many went through. */
final class Load {
  /** What a run did. */
  record Run(long calls, long nanos, long cpuNanos, long processCpuNanos) {
    double microsPerCall() {
      return nanos / 1_000.0 / calls;
    }

    /**
     * CPU time of the calling threads per call (OkHttp runs a synchronous call, interceptors and
     * socket I/O included, on its caller; the server's threads are not counted). Far less sensitive
     * than wall time to other work on a shared machine: a preempted thread accrues no CPU time.
     */
    double cpuMicrosPerCall() {
      return cpuNanos / 1_000.0 / calls;
    }

    double callsPerSecond() {
      return calls * 1e9 / nanos;
    }

    /**
     * CPU time of the whole JVM per call: the calling threads, the loopback server's threads, and
     * any thread a row runs (a store's writer, a commit round's), while the run lasted. Unlike
     * {@link #cpuMicrosPerCall} it compares rows whose work lands on different threads.
     */
    double processCpuMicrosPerCall() {
      return processCpuNanos / 1_000.0 / calls;
    }

    /** How many cores the JVM kept busy on average: near the machine's count, the run was CPU-bound. */
    double coresBusy() {
      return (double) processCpuNanos / nanos;
    }
  }

  private Load() {
  }

  /**
   * Calls on {@code threads} threads until {@code millis} have passed; every thread starts at once.
   *
   * @throws Exception the first failure of any call: a benchmark of failing calls measures nothing
   */
  static Run run(Strategy.Session session, int threads, long millis) throws Exception {
    LongAdder calls = new LongAdder();
    LongAdder cpu = new LongAdder();
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    AtomicReference<Exception> failure = new AtomicReference<>();
    CountDownLatch ready = new CountDownLatch(threads);
    CountDownLatch go = new CountDownLatch(1);
    long[] deadline = new long[1];
    List<Thread> workers = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(() -> {
        ready.countDown();
        try {
          go.await();
          long cpuStart = mx.getCurrentThreadCpuTime();
          while (System.nanoTime() < deadline[0] && failure.get() == null) {
            session.call();
            calls.increment();
          }
          cpu.add(mx.getCurrentThreadCpuTime() - cpuStart);
        } catch (Exception e) {
          failure.compareAndSet(null, e);
        }
      }, "bench-caller-" + i);
      workers.add(t);
      t.start();
    }
    ready.await();
    long processCpuStart = processCpuNanos();
    long start = System.nanoTime();
    deadline[0] = start + millis * 1_000_000L;
    go.countDown();
    for (Thread t : workers) {
      t.join();
    }
    long nanos = System.nanoTime() - start;
    long processCpu = processCpuNanos() - processCpuStart;
    if (failure.get() != null) {
      throw failure.get();
    }
    return new Run(calls.sum(), nanos, cpu.sum(), processCpu);
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }
}
