package dev.idem.jdbc.bench;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * A durable keyed call's journal work on many threads at once, without HTTP (issue 28, P3): each
 * thread runs begin-and-claim (the sync write) then the attempt with its outcome (deferred), as the
 * executor's inline call does, on one embedded journal. It prints, per round, what a shared
 * machine disturbs least: the CPU per call (calling threads, and the whole process), the context
 * switches per call (every wake-up costs CPU on two cores), and what went to the kernel per call
 * (bytes and syscalls written and read, from {@code /proc/self/io}; Linux only). Keys are the
 * executor's own (UUIDv7, time-ordered): random keys spread the primary key's inserts over its
 * leaves and more than double the bytes written per call, which no real caller sees.
 *
 * <p>A program, not a test: {@code java -cp <persistence test class path>
 * dev.idem.jdbc.bench.ConcurrentCallCost [threads=32] [millisPerRound=2000] [rounds=8]}. Read the
 * later rounds (the first ones include the JIT's compiles). For profiling, start it with
 * {@code -XX:+PreserveFramePointer} and attach {@code perf record -g -p <pid>} (it prints its pid).
 */
public final class ConcurrentCallCost {
  private ConcurrentCallCost() {
  }

  public static void main(String[] args) throws Exception {
    int threads = args.length > 0 ? Integer.parseInt(args[0]) : 32;
    long millis = args.length > 1 ? Long.parseLong(args[1]) : 2000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 8;
    Fingerprint fingerprint = Fingerprinter.defaults().fingerprint(CallCost.REQUEST);
    var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    System.out.println("pid " + ProcessHandle.current().pid());
    try (JdbcJournal journal = JdbcJournal.embedded(Files.createTempDirectory("concurrent-call-cost")).open()) {
      for (int r = 1; r <= rounds; r++) {
        long cpu0 = os.getProcessCpuTime();
        long switches0 = contextSwitches(Path.of("/proc/self/task"));
        long[] io0 = io();
        Round round = round(journal, fingerprint, threads, millis);
        long[] io1 = io();
        double calls = round.calls();
        // Threads of the round have ended: their switches were added by each before it ended.
        double switches = contextSwitches(Path.of("/proc/self/task")) - switches0 + round.switches();
        System.out.printf(Locale.ROOT, "round %d: %d threads, %.0f calls/s, CPU per call %.1f µs (calling threads)"
            + " %.1f µs (process), %.2f context switches per call, per call written %.0f B in %.2f syscalls,"
            + " read %.0f B in %.2f%n", r, threads, calls * 1e9 / round.nanos(), round.cpuNanos() / 1e3 / calls,
            (os.getProcessCpuTime() - cpu0) / 1e3 / calls, switches / calls, (io1[1] - io0[1]) / calls,
            (io1[3] - io0[3]) / calls, (io1[0] - io0[0]) / calls, (io1[2] - io0[2]) / calls);
      }
    }
  }

  private record Round(long calls, long nanos, long cpuNanos, long switches) {
  }

  private static Round round(JdbcJournal journal, Fingerprint fingerprint, int threads, long millis)
      throws Exception {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    LongAdder calls = new LongAdder();
    LongAdder cpu = new LongAdder();
    LongAdder switches = new LongAdder();
    AtomicReference<Exception> failure = new AtomicReference<>();
    long start = System.nanoTime();
    long deadline = start + millis * 1_000_000L;
    List<Thread> workers = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(() -> {
        long cpuStart = mx.getCurrentThreadCpuTime();
        try {
          while (System.nanoTime() < deadline && failure.get() == null) {
            call(journal, fingerprint);
            calls.increment();
          }
        } catch (Exception e) {
          failure.compareAndSet(null, e);
        }
        cpu.add(mx.getCurrentThreadCpuTime() - cpuStart);
        switches.add(contextSwitches(Path.of("/proc/thread-self/status")));
      }, "call-cost-" + i);
      workers.add(t);
      t.start();
    }
    for (Thread t : workers) {
      t.join();
    }
    if (failure.get() != null) {
      throw failure.get();
    }
    return new Round(calls.sum(), System.nanoTime() - start, cpu.sum(), switches.sum());
  }

  /** The journal's part of the executor's inline call that succeeds at its first attempt. */
  private static void call(JdbcJournal journal, Fingerprint fingerprint) throws Exception {
    OperationId id = new OperationId("s", "charge", IdempotencyKey.generate());
    Instant now = Instant.now();
    BeginResult begun = journal.beginAndClaim(new NewOperation(id, null, fingerprint, CallCost.REQUEST, now),
        "owner-1", Duration.ofSeconds(30));
    journal.recordAttemptAndTransition(id, begun.lease(),
        new AttemptRecord(1, 1, now, now, Classification.SUCCESS, 201, null, "HTTP 201", Duration.ZERO, "success"),
        Transition.finish(OperationState.SUCCEEDED, now, CallCost.RESPONSE, "HTTP 201"));
  }

  /**
   * Voluntary and involuntary context switches: of one thread ({@code /proc/thread-self/status}),
   * or summed over the live threads of a {@code /proc/self/task} directory; 0 where there is no
   * {@code /proc}.
   */
  private static long contextSwitches(Path path) {
    long n = 0;
    try {
      if (Files.isDirectory(path)) {
        try (var tasks = Files.newDirectoryStream(path)) {
          for (Path task : tasks) {
            n += contextSwitches(task.resolve("status"));
          }
        }
        return n;
      }
      for (String line : Files.readAllLines(path)) {
        if (line.contains("ctxt_switches:")) {
          n += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
        }
      }
    } catch (IOException | RuntimeException gone) {
      // a thread that ended while it was read, or no /proc: counted as nothing
    }
    return n;
  }

  /** rchar, wchar, syscr, syscw of this process; zeros where there is no {@code /proc/self/io}. */
  private static long[] io() {
    long[] v = new long[4];
    List<String> names = List.of("rchar", "wchar", "syscr", "syscw");
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/io"))) {
        int colon = line.indexOf(':');
        int i = colon < 0 ? -1 : names.indexOf(line.substring(0, colon));
        if (i >= 0) {
          v[i] = Long.parseLong(line.substring(colon + 1).trim());
        }
      }
    } catch (IOException | RuntimeException none) {
      // not Linux: the I/O figures read 0
    }
    return v;
  }
}
