package dev.idem.bench;

import java.lang.management.GarbageCollectorMXBean;
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
  record Run(long calls, long nanos, long cpuNanos, long processCpuNanos, long gcPauseNanos) {
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

    /**
     * The collector's stop-the-world pauses per call, wall time, while the run lasted: the share of
     * a row's time that depends on what it keeps alive (a young collection copies every object
     * still live), not on its code path. Pauses of other rows' garbage that fall in this run count
     * too, so it is rough for a single slice.
     */
    double gcPauseMicrosPerCall() {
      return gcPauseNanos / 1_000.0 / calls;
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
    long gcStart = gcPauseMillis();
    long start = System.nanoTime();
    deadline[0] = start + millis * 1_000_000L;
    go.countDown();
    for (Thread t : workers) {
      t.join();
    }
    long nanos = System.nanoTime() - start;
    long processCpu = processCpuNanos() - processCpuStart;
    long gcPause = (gcPauseMillis() - gcStart) * 1_000_000L;
    if (failure.get() != null) {
      throw failure.get();
    }
    return new Run(calls.sum(), nanos, cpu.sum(), processCpu, gcPause);
  }

  /**
   * The collectors' accumulated pause time. G1's concurrent cycle has a bean of its own on newer
   * JDKs ("G1 Concurrent GC"), whose time runs beside the app's threads: left out.
   */
  private static long gcPauseMillis() {
    long millis = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (!gc.getName().contains("Concurrent")) {
        millis += Math.max(0, gc.getCollectionTime());
      }
    }
    return millis;
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }
}
