package dev.idem.bench;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import okhttp3.OkHttpClient;

/**
 * P4, in a JVM of its own started with {@code -Xmx256m}: journals N operations without sending them
 * (as a process that crashed or queued them would leave them), closes the journal, opens it again
 * as a restarted process does, and times {@code resumePending} sending all of them to the loopback
 * server through Idem's OkHttp transport. Prints one {@code RESULT} line.
 *
 * <p>Heap: the peak of heap used, sampled every 10 ms, and the peak of what the last collection
 * left live (a collector may let garbage pile up to any size below -Xmx, so the live figure is the
 * one that says whether memory stays flat).
 *
 * <p>The resuming executor runs {@code resumeConcurrency} at the given count: the operations were
 * queued ({@code enqueue}), so each one's first claim is a durable write, and the builder's
 * documentation advises concurrent resumes for them, which share the journal's group commits (one
 * after another, each pays a disk sync).
 *
 * <p>With a fifth argument {@code warm}, it then does it all again, in a second journal, in the
 * same JVM, and prints a {@code WARM} line of the same fields: the first pass is what a restarted
 * process gets (its JIT compiles the resume's code while it runs, a third of the pass's CPU), the
 * second what the code costs once compiled.
 *
 * <p>Arguments: server URL, journal directory, operation count, resume concurrency, optionally
 * {@code warm}.
 */
public final class ResumeChild {
  private ResumeChild() {
  }

  /**
   * Journals, reopens and resumes; prints the RESULT line (and, warm, the WARM line).
   *
   * @param args server URL, journal directory, operation count, resume concurrency, optionally warm
   * @throws Exception if the journal fails or an enqueue fails
   */
  public static void main(String[] args) throws Exception {
    URI url = URI.create(args[0]);
    Path dir = Path.of(args[1]);
    int count = Integer.parseInt(args[2]);
    int concurrency = Integer.parseInt(args[3]);
    boolean warm = args.length > 4 && args[4].equals("warm");
    pass("RESULT", url, dir, count, concurrency);
    if (warm) {
      pass("WARM", url, dir.resolveSibling(dir.getFileName() + "-warm"), count, concurrency);
    }
  }

  /** One enqueue, reopen and timed resume of {@code count} operations in {@code dir}; prints a line. */
  private static void pass(String label, URI url, Path dir, int count, int concurrency) throws Exception {
    RequestSnapshot request = RequestSnapshot.builder("POST", url).body(Strategies.BODY, "application/json").build();

    long enqueueStart = System.nanoTime();
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
      // Concurrent enqueues share commits; this part is set-up, not measured.
      List<Thread> threads = new ArrayList<>();
      AtomicLong next = new AtomicLong();
      AtomicLong failures = new AtomicLong();
      for (int t = 0; t < 16; t++) {
        Thread th = new Thread(() -> {
          try {
            while (next.getAndIncrement() < count) {
              executor.enqueue(Operation.builder("create-order", request).build());
            }
          } catch (Exception e) {
            failures.incrementAndGet();
            e.printStackTrace();
          }
        });
        threads.add(th);
        th.start();
      }
      for (Thread th : threads) {
        th.join();
      }
      if (failures.get() > 0) {
        throw new IllegalStateException("enqueue failed");
      }
    }
    double enqueueSeconds = (System.nanoTime() - enqueueStart) / 1e9;

    System.gc();
    // A mark in the output (and in an strace of this JVM: a write to fd 1) where the timed part begins.
    System.out.println("resuming " + count + " operations");
    System.out.flush();
    HeapSampler heap = HeapSampler.begin();
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    Map<String, Long> threadsAtStart = ThreadCpu.byName();
    long cpuStart = os.getProcessCpuTime();
    long start = System.nanoTime();
    ResumeSummary summary;
    LongAdder succeeded = new LongAdder();
    LongAdder failed = new LongAdder();
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).resumeConcurrency(concurrency)
          .build();
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      OkHttpClient client = new OkHttpClient.Builder().retryOnConnectionFailure(false)
          .connectionPool(new okhttp3.ConnectionPool(concurrency + 8, 5, java.util.concurrent.TimeUnit.MINUTES)).build();
      summary = executor.resumePending(Map.of("create-order",
          ResumeHandler.of(idem.transport(client), o -> succeeded.increment(), f -> failed.increment())));
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    // The whole process's CPU (lanes, the journal's writer, JIT, GC): what a resumed operation
    // costs the machine, a figure the machine's load moves far less than the wall time.
    long cpuNanos = os.getProcessCpuTime() - cpuStart;
    double cpuMicrosPerOp = cpuNanos / 1e3 / Math.max(1, succeeded.sum());
    Map<String, Long> threadCpu = ThreadCpu.since(threadsAtStart);
    // The lanes ended with the pass: theirs is what the threads alive now do not account for.
    threadCpu.put("ended threads (the resume's lanes)",
        cpuNanos - threadCpu.values().stream().mapToLong(v -> Math.max(0, v)).sum());
    heap.finish();
    System.out.println("CPU of the resume by thread, µs per operation: " + ThreadCpu.perOperation(threadCpu,
        succeeded.sum()));
    System.out.printf(Locale.ROOT,
        label + " operations=%d succeeded=%d failed=%d examined=%d seconds=%.2f opsPerSecond=%.0f peakHeapMiB=%.1f"
            + " peakLiveHeapMiB=%.1f maxHeapMiB=%.0f enqueueSeconds=%.1f concurrency=%d cpuMicrosPerOp=%.0f%n",
        count, succeeded.sum(), failed.sum(), summary.examined(), seconds, succeeded.sum() / seconds,
        heap.peakUsed / 1048576.0, heap.peakLive / 1048576.0,
        Runtime.getRuntime().maxMemory() / 1048576.0, enqueueSeconds, concurrency, cpuMicrosPerOp);
  }

  /** Samples heap use on a daemon thread. */
  private static final class HeapSampler extends Thread {
    private volatile boolean running = true;
    private volatile long peakUsed;
    private volatile long peakLive;

    static HeapSampler begin() {
      HeapSampler s = new HeapSampler();
      s.setDaemon(true);
      s.start();
      return s;
    }

    @Override
    public void run() {
      List<MemoryPoolMXBean> pools = ManagementFactory.getMemoryPoolMXBeans().stream()
          .filter(p -> p.getType() == MemoryType.HEAP).toList();
      while (running) {
        long used = 0;
        long live = 0;
        for (MemoryPoolMXBean p : pools) {
          used += p.getUsage().getUsed();
          if (p.getCollectionUsage() != null) {
            live += p.getCollectionUsage().getUsed();
          }
        }
        peakUsed = Math.max(peakUsed, used);
        peakLive = Math.max(peakLive, live);
        try {
          Thread.sleep(10);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    void finish() throws InterruptedException {
      running = false;
      join();
    }
  }
}
