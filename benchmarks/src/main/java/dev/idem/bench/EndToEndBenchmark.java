package dev.idem.bench;

import dev.idem.jdbc.JdbcJournal;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;

/**
 * What a keyed POST costs end to end: every row of issue 18's table (raw OkHttp, Failsafe,
 * resilience4j-retry, a Stripe-style UUID header, Idem in memory, also keeping no finished
 * operation, Idem durable) against one loopback JDK HttpServer, at 1 thread (µs per call) and at
 * 32 threads (calls/s), each with its ratio to raw measured in the same run, and the floor rows
 * (raw OkHttp plus its key committed first by a textbook group commit, {@link GroupCommitFloor}:
 * what a textbook durable design keeps of raw's rate; the same keeping the journal's row, its table
 * and indexes, {@link JournalRowTable}, under P3; and raw OkHttp plus a textbook in-memory key,
 * {@link InMemoryFloor}, keeping finished operations and keeping none, under P1c); then the goals P1 to P4, and a JFR
 * breakdown of Idem's two paths.
 *
 * <p>Method: a warm-up of every row, then slices; in each slice every row runs for the slice's time
 * on 1 thread, then every row on 32 threads, in an order rotated by one each slice, and the floor
 * (one bare SQLite insert committed with WAL and {@code synchronous=FULL}, {@link SqliteFloor}) and
 * an fsync of 256 bytes are measured beside the journal right before and after the durable row's
 * 1-thread run. Then the server side ({@link ServerBenchmark}: the guard over HTTP, G1; verified
 * webhooks into the SQLite inbox, W1), and JFR profiles whose samples split each Idem path's
 * measured CPU per call into components. Each row gets a fresh journal per run, so that
 * no run inherits the records of another. Figures are medians over slices; ratios are the medians
 * of the per-slice ratios (the machine is shared and its speed drifts, so a ratio within a slice
 * is worth more than a ratio of medians).
 *
 * <p>Run by {@code mvn -B -q -pl benchmarks -am test-compile -Pbench-e2e}; system properties (on that
 * command line): {@code idem.bench.slices} (6), {@code idem.bench.sliceMillis} (2000),
 * {@code idem.bench.warmupMillis} (3000), {@code idem.bench.threads} (32),
 * {@code idem.bench.p4.operations} (100000), {@code idem.bench.profileMillis} (10000; 0 skips the
 * profile), {@code idem.bench.rows} (blank for every row; else short names such as
 * {@code memory,memory-none,memory-floor,memory-floor-none,durable,floor,floor-row}; also {@code guard} and {@code webhook} for the server
 * side: raw always runs, and P2 to P4 only with the durable row). The one argument is the output
 * directory (default {@code target/bench-e2e}).
 */
public final class EndToEndBenchmark {
  private static final Pattern FIELD = Pattern.compile("(\\w+)=([-0-9.]+)");
  /** Commits of the SQLite floor before and after each durable 1-thread run. */
  private static final int FLOOR_COMMITS = 200;

  private EndToEndBenchmark() {
  }

  /**
   * Runs the whole benchmark and prints it; also writes {@code results.md} to the output directory.
   *
   * @param args optionally the output directory (default {@code target/bench-e2e})
   * @throws Exception if a row fails a call (a failing row measures nothing) or a child JVM fails
   */
  public static void main(String[] args) throws Exception {
    boolean noDelay = LoopbackServer.requireNoDelay();
    int slices = Integer.getInteger("idem.bench.slices", 6);
    long sliceMillis = Long.getLong("idem.bench.sliceMillis", 2000);
    long warmupMillis = Long.getLong("idem.bench.warmupMillis", 3000);
    int threads = Integer.getInteger("idem.bench.threads", 32);
    int p4Operations = Integer.getInteger("idem.bench.p4.operations", 100_000);
    long profileMillis = Long.getLong("idem.bench.profileMillis", 10_000);
    String rowFilter = System.getProperty("idem.bench.rows", "");
    Path out = Path.of(args.length > 0 ? args[0] : "target/bench-e2e").toAbsolutePath();
    Files.createDirectories(out);
    Path work = Files.createTempDirectory(out, "run-");

    System.out.printf(Locale.ROOT, "Idem end-to-end benchmark, %s%n", Instant.now());
    System.out.printf(Locale.ROOT, "load average at start: %s%n", Stats.loadAverage());
    System.out.printf(Locale.ROOT, "java %s, %d cores, sun.net.httpserver.nodelay=%s%n",
        System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(), noDelay);
    System.out.printf(Locale.ROOT, "slices %d x %d ms per row and thread count, warm-up %d ms per row, %d threads,"
        + " P4 %d operations, profile %d ms per run; journals in %s%n", slices, sliceMillis, warmupMillis, threads,
        p4Operations, profileMillis, work);

    StringBuilder md = new StringBuilder();
    try (LoopbackServer server = LoopbackServer.start(false, 4)) {
      OkHttpClient base = new OkHttpClient.Builder()
          .connectionPool(new ConnectionPool(threads + 8, 5, TimeUnit.MINUTES)).build();
      List<Strategy> rows = Strategies.selected(base, server.url(), rowFilter);
      int n = rows.size();

      for (Strategy row : rows) {
        try (Strategy.Session session = row.open(Files.createTempDirectory(work, "warm-"))) {
          Load.run(session, 1, warmupMillis / 2);
          Load.run(session, threads, warmupMillis / 2);
        }
      }

      double[][] one = new double[n][slices];
      double[][] oneCpu = new double[n][slices];
      double[][] manyCpu = new double[n][slices];
      double[][] many = new double[n][slices];
      double[][] manyProcessCpu = new double[n][slices];
      double[][] manyCores = new double[n][slices];
      double[][] manyGc = new double[n][slices];
      double[] fsync = new double[slices];
      double[] floor = new double[slices];
      double[] oneDirect = new double[slices];
      int durableRow = find(rows, Strategies.IDEM_DURABLE);
      SqliteFloor sqliteFloor = durableRow >= 0 ? SqliteFloor.open(work.resolve("floor.db")) : null;
      for (int s = 0; s < slices; s++) {
        for (int i = 0; i < n; i++) {
          int k = (i + s) % n;
          // P2 divides by the fsync, so it is measured right before and right after the durable
          // row's run: other builds on this machine move the disk's speed by 10x within a minute.
          double fsyncBefore = k == durableRow ? Stats.fsyncMicros(work.resolve("fsync.probe"), 100) : 0;
          double floorBefore = k == durableRow ? sqliteFloor.meanMicros(FLOOR_COMMITS) : 0;
          try (Strategy.Session session = rows.get(k).open(Files.createTempDirectory(work, "one-"))) {
            Load.Run run = Load.run(session, 1, sliceMillis);
            one[k][s] = run.microsPerCall();
            oneCpu[k][s] = run.cpuMicrosPerCall();
          }
          if (k == durableRow) {
            floor[s] = (floorBefore + sqliteFloor.meanMicros(FLOOR_COMMITS)) / 2;
            oneDirect[s] = directCommitThenRaw(rows.get(0), sqliteFloor, work, sliceMillis);
            fsync[s] = (fsyncBefore + Stats.fsyncMicros(work.resolve("fsync.probe"), 100)) / 2;
          }
        }
        for (int i = 0; i < n; i++) {
          int k = (i + s) % n;
          try (Strategy.Session session = rows.get(k).open(Files.createTempDirectory(work, "many-"))) {
            Load.Run run = Load.run(session, threads, sliceMillis);
            many[k][s] = run.callsPerSecond();
            manyCpu[k][s] = run.cpuMicrosPerCall();
            manyProcessCpu[k][s] = run.processCpuMicrosPerCall();
            manyCores[k][s] = run.coresBusy();
            manyGc[k][s] = run.gcPauseMicrosPerCall();
          }
        }
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "slice %d: fsync %.0f µs, SQLite floor %.0f µs;",
            s, fsync[s], floor[s]));
        for (int k = 0; k < n; k++) {
          line.append(String.format(Locale.ROOT, " [%d] %.0f µs %.0f/s (cpu %.0f, %.0f µs)", k, one[k][s], many[k][s],
              oneCpu[k][s], manyCpu[k][s]));
        }
        System.out.println(line);
        deleteRunDirectories(work);
      }

      if (sqliteFloor != null) {
        sqliteFloor.close();
      }
      double[] oneRatio = new double[n];
      double[] manyRatio = new double[n];
      md.append(String.format(Locale.ROOT, "| strategy | 1 thread: µs per call (× raw) | %d threads: calls/s (× raw) |%n",
          threads));
      md.append("|---|---|---|\n");
      for (int k = 0; k < n; k++) {
        oneRatio[k] = medianRatio(one[k], one[0]);
        manyRatio[k] = medianRatio(many[k], many[0]);
        md.append(String.format(Locale.ROOT, "| %s | %.0f (%.2f) | %,.0f (%.2f) |%n", rows.get(k).label(),
            Stats.median(one[k]), oneRatio[k], Stats.median(many[k]), manyRatio[k]));
      }
      md.append(String.format(Locale.ROOT, "%nCPU time of the calling threads per call (the server's not counted; less"
          + " sensitive to the machine's load than wall time):%n%n| strategy | 1 thread: CPU µs per call (× raw) |"
          + " %d threads: CPU µs per call (× raw) |%n|---|---|---|%n", threads));
      for (int k = 0; k < n; k++) {
        md.append(String.format(Locale.ROOT, "| %s | %.1f (%.2f) | %.1f (%.2f) |%n", rows.get(k).label(),
            Stats.median(oneCpu[k]), medianRatio(oneCpu[k], oneCpu[0]), Stats.median(manyCpu[k]),
            medianRatio(manyCpu[k], manyCpu[0])));
      }
      md.append(String.format(Locale.ROOT, "%nAt %d threads, the whole JVM (the calling threads, the loopback server, and"
          + " any thread of the row's own): CPU per call, how many of the %d cores it kept busy, and the collector's"
          + " pauses per call (wall; a young collection copies what a row keeps alive):%n%n| strategy |"
          + " CPU µs per call (× raw) | cores busy | collector's pauses, µs per call |%n|---|---|---|---|%n", threads,
          Runtime.getRuntime().availableProcessors()));
      for (int k = 0; k < n; k++) {
        md.append(String.format(Locale.ROOT, "| %s | %.1f (%.2f) | %.2f | %.1f |%n", rows.get(k).label(),
            Stats.median(manyProcessCpu[k]), medianRatio(manyProcessCpu[k], manyProcessCpu[0]),
            Stats.median(manyCores[k]), Stats.median(manyGc[k])));
      }
      int memory = find(rows, Strategies.IDEM_MEMORY);
      int memoryKeepingNone = find(rows, Strategies.IDEM_MEMORY_KEEPING_NONE);
      int durable = find(rows, Strategies.IDEM_DURABLE);
      double[] p2 = new double[slices];
      if (durable >= 0) {
        for (int s = 0; s < slices; s++) {
          p2[s] = (one[durable][s] - one[0][s]) / floor[s];
        }
        md.append(String.format(Locale.ROOT, "%n| the floor, beside the journal, around the durable 1-thread run | µs |%n"
            + "|---|---|%n| one bare SQLite insert committed with WAL and synchronous=FULL (mean of %d, before and"
            + " after) | %.0f (slices: %s) |%n| fsync of 256 bytes (median of 100, before and after) | %.0f (slices:"
            + " %s) |%n", FLOOR_COMMITS, Stats.median(floor), list(floor), Stats.median(fsync), list(fsync)));
        md.append(String.format(Locale.ROOT, "%nP2 per slice, (durable − raw) ÷ the floor: %s%n", list2(p2)));
        double[] p2Floor = new double[slices];
        for (int s = 0; s < slices; s++) {
          p2Floor[s] = (oneDirect[s] - one[0][s]) / floor[s];
        }
        md.append(String.format(Locale.ROOT, "P2's own floor, the same ratio for raw OkHttp with that bare commit made"
            + " on the calling thread before each call (no Idem code, no other thread; %.0f µs per call): %.2f"
            + " (slices: %s); Idem's P2 is %.2f of it%n", Stats.median(oneDirect), Stats.median(p2Floor),
            list2(p2Floor), Stats.median(p2) / Stats.median(p2Floor)));
        if (Stats.median(fsync) > 300) {
          // DESIGN.md measured 140-180 µs (November) and the journal benchmark 37-61 µs (December) on
          // a quiet disk; far above that, other I/O is queued ahead of the probe and P2 flatters Idem.
          md.append(String.format(Locale.ROOT, "CAUTION: the fsync took %.0f µs, far above a quiet disk's 40-180 µs:"
              + " the disk is contended and P2 below is not a trustworthy verdict.%n", Stats.median(fsync)));
        }
      }
      md.append('\n');
      md.append("| id | what | measured | goal | |\n|---|---|---|---|---|\n");
      if (memory >= 0) {
        goal(md, "P1", "Idem, in-memory journal, 1 thread: µs per call ÷ raw", oneRatio[memory], "≤ 1.10",
            oneRatio[memory] <= 1.10);
        goal(md, "P1c", "Idem, in-memory journal, " + threads + " threads: calls/s ÷ raw", manyRatio[memory], "≥ 0.90",
            manyRatio[memory] >= 0.90);
      }
      String keepingNone = "";
      if (memory >= 0 && memoryKeepingNone >= 0) {
        double keeping = manyRatio[memoryKeepingNone] - manyRatio[memory];
        keepingNone = String.format(Locale.ROOT, "%nP1c split: the in-memory journal keeping no finished operation"
            + " (`new InMemoryJournal(0)`) keeps %.2f of raw's rate at %d threads (whole-JVM CPU %.1f µs per call,"
            + " the default journal's %.1f, raw's %.1f): keeping finished operations costs %.2f of raw's rate%s,"
            + " Idem's other work %.2f.%n", manyRatio[memoryKeepingNone], threads,
            Stats.median(manyProcessCpu[memoryKeepingNone]), Stats.median(manyProcessCpu[memory]),
            Stats.median(manyProcessCpu[0]), keeping,
            // A difference of two medians of per-slice ratios: below 0 it says only that the cost
            // was smaller than the run's noise.
            keeping < 0 ? " (below 0: less than this run's noise)" : "", 1 - manyRatio[memoryKeepingNone]);
      }
      if (durable >= 0) {
        goal(md, "P2", "Idem, durable, 1 thread: (µs per call − raw) ÷ one bare SQLite durable commit",
            Stats.median(p2), "≤ 1.25", Stats.median(p2) <= 1.25);
        goal(md, "P3", "Idem, durable, " + threads + " threads: calls/s ÷ raw", manyRatio[durable], "≥ 0.50",
            manyRatio[durable] >= 0.50);
      }
      int durableFloor = find(rows, Strategies.FLOOR);
      if (durable >= 0 && durableFloor >= 0) {
        StringBuilder floorLine = new StringBuilder();
        ServerBenchmark.floor(floorLine, "P3", manyRatio[durable], manyRatio[durableFloor]);
        int rowFloor = find(rows, Strategies.FLOOR_JOURNAL_ROW);
        if (rowFloor >= 0) {
          floorLine.append(String.format(Locale.ROOT, "P3 keeping the journal's row: the floor keeping it (its table"
              + " and indexes, no Idem code) kept %.2f of raw's rate, so the goal's 0.50 is %s it; Idem kept %.2f,"
              + " which is %.2f of it (whole-JVM CPU per call: %.1f µs, Idem's %.1f, the textbook floor's %.1f)%n",
              manyRatio[rowFloor], manyRatio[rowFloor] < 0.50 ? "above" : "at or below", manyRatio[durable],
              manyRatio[durable] / manyRatio[rowFloor], Stats.median(manyProcessCpu[rowFloor]),
              Stats.median(manyProcessCpu[durable]), Stats.median(manyProcessCpu[durableFloor])));
        }
        md.append('\n').append(floorLine).append('\n');
      }
      int memoryFloor = find(rows, Strategies.MEMORY_FLOOR);
      int memoryFloorNone = find(rows, Strategies.MEMORY_FLOOR_KEEPING_NONE);
      if (memory >= 0 && memoryFloor >= 0) {
        StringBuilder floorLine = new StringBuilder();
        ServerBenchmark.floor(floorLine, "P1c", manyRatio[memory], manyRatio[memoryFloor], 0.90);
        if (memoryKeepingNone >= 0 && memoryFloorNone >= 0) {
          floorLine.append(String.format(Locale.ROOT, "P1c keeping none: the floor keeping none kept %.2f of raw's"
              + " rate, Idem keeping none %.2f, which is %.2f of it%n", manyRatio[memoryFloorNone],
              manyRatio[memoryKeepingNone], manyRatio[memoryKeepingNone] / manyRatio[memoryFloorNone]));
        }
        md.append('\n').append(floorLine);
      }
      md.append(keepingNone);
      System.out.println();
      System.out.print(md);

      if (durable >= 0) {
        String split = durableSplit(base, server.url(), work, sliceMillis);
        System.out.print(split);
        md.append('\n').append(split);
        String p4 = resume(server, work, out, p4Operations, Stats.median(many[0]));
        System.out.println(p4);
        md.append(p4).append('\n');
      }

      List<String> profiled = new ArrayList<>();
      if (memory >= 0) {
        profiled.add("memory");
      }
      if (durable >= 0) {
        profiled.add("durable");
      }
      if (profileMillis > 0 && !profiled.isEmpty()) {
        Map<String, double[]> cpuPerCall = new java.util.HashMap<>();
        if (memory >= 0) {
          cpuPerCall.put("memory", new double[] {Stats.median(oneCpu[memory]), Stats.median(manyCpu[memory])});
        }
        if (durable >= 0) {
          cpuPerCall.put("durable", new double[] {Stats.median(oneCpu[durable]), Stats.median(manyCpu[durable])});
        }
        String digest = profile(server, work, out, profileMillis, threads, profiled, cpuPerCall);
        System.out.print(digest);
        md.append('\n').append(digest);
      }
      String serverSide = ServerBenchmark.run(base, work, rowFilter, slices, sliceMillis, warmupMillis);
      System.out.print(serverSide);
      md.append('\n').append(serverSide);
      base.connectionPool().evictAll();
      base.dispatcher().executorService().shutdown();
    } finally {
      deleteTree(work);
    }
    String end = "load average at end: " + Stats.loadAverage();
    System.out.println(end);
    md.append('\n').append(end).append('\n');
    Files.writeString(out.resolve("results.md"), md.toString());
    System.out.println("written: " + out.resolve("results.md"));
  }

  /**
   * P4: the resume of N journaled operations, in a JVM of its own capped at 256 MiB of heap; beside
   * it, raw OkHttp and P3's floor making as many calls from a cold JVM each, and the same resume
   * once its JVM is warm.
   */
  private static String resume(LoopbackServer server, Path work, Path out, int count, double rawCallsPerSecond)
      throws Exception {
    int threads = Integer.getInteger("idem.bench.threads", 32);
    Map<String, Double> cold = result(ChildJvm.run(out.resolve("p4-cold-raw.log"), List.of("-Xmx256m"),
        ColdStartChild.class, 1800, "raw", server.url().toString(), Integer.toString(count),
        Integer.toString(threads)));
    Map<String, Double> coldFloor = result(ChildJvm.run(out.resolve("p4-cold-floor.log"), List.of("-Xmx256m"),
        ColdStartChild.class, 1800, "floor", server.url().toString(), Integer.toString(count),
        Integer.toString(threads), work.resolve("p4-cold-floor").toString()));
    long before = server.requests();
    String output = ChildJvm.run(out.resolve("p4-resume.log"), List.of("-Xmx256m"), ResumeChild.class, 1800,
        server.url().toString(), work.resolve("p4-journal").toString(), Integer.toString(count),
        Integer.toString(threads), "warm");
    Map<String, Double> r = result(output);
    Map<String, Double> warm = result(output, "WARM");
    long sent = server.requests() - before - Math.round(warm.get("succeeded"));
    double opsPerSecond = r.get("opsPerSecond");
    double peak = r.get("peakHeapMiB");
    double ratio = opsPerSecond / rawCallsPerSecond;
    boolean met = ratio >= 0.40 && peak < 256 && r.get("succeeded") == count;
    return String.format(Locale.ROOT, "| P4 | resume %,d pending operations (durable journal, reopened) against the"
            + " loopback server, in a JVM with -Xmx256m, resumeConcurrency %.0f: ops/s ÷ raw calls/s at %s threads"
            + " (%,.0f) | %.2f: %,.0f"
            + " ops/s in %.1f s, %,.0f µs of the JVM's CPU per operation (%s); %,.0f succeeded, %,d requests seen by"
            + " the server; peak heap used %.0f MiB (live after GC %.0f MiB) | ≥ 0.40, heap < 256 MiB | %s |",
        count, r.get("concurrency"), Integer.getInteger("idem.bench.threads", 32), rawCallsPerSecond, ratio,
        opsPerSecond, r.get("seconds"), r.get("cpuMicrosPerOp"), "by thread in " + out.resolve("p4-resume.log"),
        r.get("succeeded"), sent, peak, r.get("peakLiveHeapMiB"), met ? "met" : "NOT met")
        + String.format(Locale.ROOT, "%n%nP4 from a cold start (raw OkHttp and the floor each in a JVM of its own with -Xmx256m, as"
            + " P4's; the warm resume in P4's JVM, after its first pass):%n"
            + "- raw OkHttp, %,d POSTs at %d threads from the JVM's first call: %,.0f calls/s (**%.2f** of raw's warm"
            + " rate), %,.0f µs of the JVM's CPU per call: the JIT compiles OkHttp while it runs;%n"
            + "- the floor (P3's: each call's key committed to SQLite first, its outcome after, no Idem code), the"
            + " same calls from the JVM's first: %,.0f calls/s (**%.2f** of raw's warm rate), %,.0f µs of the JVM's"
            + " CPU per call: what a restarted process that makes one durable write before each call keeps;%n"
            + "- the same resume again, in a second journal, in the JVM that just ran the first (its code compiled):"
            + " %,.0f ops/s (%.2f of raw's warm rate), %,.0f µs of the JVM's CPU per operation;%n"
            + "- P4 ÷ the cold raw rate: **%.2f**; P4 ÷ the cold floor's rate: **%.2f**.%n",
            count, threads, cold.get("callsPerSecond"), cold.get("callsPerSecond") / rawCallsPerSecond,
            cold.get("cpuMicrosPerCall"), coldFloor.get("callsPerSecond"),
            coldFloor.get("callsPerSecond") / rawCallsPerSecond, coldFloor.get("cpuMicrosPerCall"),
            warm.get("opsPerSecond"), warm.get("opsPerSecond") / rawCallsPerSecond,
            warm.get("cpuMicrosPerOp"), opsPerSecond / cold.get("callsPerSecond"),
            opsPerSecond / coldFloor.get("callsPerSecond"));
  }

  /** JFR recordings of Idem's two paths at 1 thread and at N threads; full summaries go to files. */
  private static String profile(LoopbackServer server, Path work, Path out, long millis, int threads,
      List<String> profiled, Map<String, double[]> cpuPerCall) throws Exception {
    StringBuilder digest = new StringBuilder("Profile (JFR in a client JVM of its own; recording slows the calls, so read shares, not"
        + " speeds; full summaries in " + out + "):\n");
    for (String row : profiled) {
      for (int t : new int[] {1, threads}) {
        String name = "profile-" + row + "-" + t + "t";
        Path jfr = out.resolve(name + ".jfr");
        String output = ChildJvm.run(out.resolve(name + ".log"), List.of(), ProfileChild.class, 600,
            server.url().toString(), row, Integer.toString(t), Long.toString(millis),
            work.resolve(name).toString(), jfr.toString());
        Map<String, Double> r = result(output);
        long calls = r.get("calls").longValue();
        Path text = out.resolve(name + ".txt");
        try (PrintStream ps = new PrintStream(Files.newOutputStream(text), true, "UTF-8")) {
          JfrSummary.summarise(jfr, calls, ps);
        }
        digest.append(String.format(Locale.ROOT, "%nIdem %s, %d thread(s), while recording: %s%n", row, t,
            t == 1 ? String.format(Locale.ROOT, "%.0f µs per call", r.get("microsPerCall"))
                : String.format(Locale.ROOT, "%,.0f calls/s", r.get("callsPerSecond"))));
        double cpu = cpuPerCall.get(row)[t == 1 ? 0 : 1];
        digest.append(String.format(Locale.ROOT, "    CPU per call by component, µs (the run's %.1f µs of CPU per call"
            + " on the calling threads, split by this recording's Java samples):%n", cpu));
        for (Map.Entry<String, Double> c : JfrSummary.cpuByComponent(jfr, cpu).entrySet()) {
          digest.append(String.format(Locale.ROOT, "    %8.1f  %s%n", c.getValue(), c.getKey()));
        }
        for (String line : JfrSummary.digest(jfr, calls, 10)) {
          digest.append("    ").append(line).append('\n');
        }
      }
    }
    return digest.toString();
  }

  private static Map<String, Double> result(String output) {
    return result(output, "RESULT");
  }

  /** The fields of the last line that starts with {@code label}. */
  private static Map<String, Double> result(String output, String label) {
    String line = output.lines().filter(l -> l.startsWith(label + " ")).reduce((a, b) -> b)
        .orElseThrow(() -> new IllegalStateException("no " + label + " line in:\n" + output));
    Map<String, Double> m = new java.util.HashMap<>();
    Matcher matcher = FIELD.matcher(line);
    while (matcher.find()) {
      m.put(matcher.group(1), Double.parseDouble(matcher.group(2)));
    }
    return m;
  }

  private static void goal(StringBuilder md, String id, String what, double value, String goal, boolean met) {
    md.append(String.format(Locale.ROOT, "| %s | %s | %.2f | %s | %s |%n", id, what, value, goal,
        met ? "met" : "NOT met"));
  }

  private static double medianRatio(double[] values, double[] baseline) {
    double[] r = new double[values.length];
    for (int s = 0; s < values.length; s++) {
      r[s] = values[s] / baseline[s];
    }
    return Stats.median(r);
  }

  /**
   * P2's own floor: the baseline row's call with one bare SQLite insert committed on the calling
   * thread right before it ({@link SqliteFloor}, the commit P2 divides by), one thread for a slice;
   * µs per call. The least a call that commits once before it sends can take here.
   */
  private static double directCommitThenRaw(Strategy raw, SqliteFloor commit, Path work, long sliceMillis)
      throws Exception {
    try (Strategy.Session session = raw.open(Files.createTempDirectory(work, "direct-"))) {
      return Load.run(() -> {
        commit.meanMicros(1);
        session.call();
      }, 1, sliceMillis).microsPerCall();
    }
  }

  /**
   * Where a durable call's time goes, on one thread: the four journal calls (timed by {@link
   * TimedJournal}) and the rest, against raw OkHttp measured right before. Three runs of one
   * slice each, alternating, after a warm-up; the median run by call time is printed.
   */
  private static String durableSplit(OkHttpClient base, java.net.URI url, Path work, long sliceMillis)
      throws Exception {
    Strategy raw = Strategies.raw(base, url);
    try (Strategy.Session warm = Strategies.idem(base, url,
        new TimedJournal(JdbcJournal.openEmbedded(Files.createTempDirectory(work, "split-warm-").resolve("j"))))) {
      Load.run(warm, 1, sliceMillis);
    }
    List<double[]> runs = new ArrayList<>();
    for (int r = 0; r < 3; r++) {
      double rawMicros;
      try (Strategy.Session session = raw.open(Files.createTempDirectory(work, "split-raw-"))) {
        rawMicros = Load.run(session, 1, sliceMillis).microsPerCall();
      }
      TimedJournal timed = new TimedJournal(
          JdbcJournal.openEmbedded(Files.createTempDirectory(work, "split-").resolve("j")));
      double callMicros;
      try (Strategy.Session session = Strategies.idem(base, url, timed)) {
        callMicros = Load.run(session, 1, sliceMillis).microsPerCall();
      }
      // Per call: an operation makes one claim and one attempt-and-transition (plus, with the
      // default journal method, one attempt record and one transition).
      runs.add(new double[] {callMicros, rawMicros, timed.begin.micros(), timed.claim.micros(),
          timed.attempt.micros() + timed.attemptAndTransition.micros(), timed.transition.micros()});
    }
    runs.sort(Comparator.comparingDouble(v -> v[0]));
    double[] m = runs.get(1);
    double journal = m[2] + m[3] + m[4] + m[5];
    return String.format(Locale.ROOT, "Where a durable call's time goes (1 thread, median of 3 runs by call time):"
        + " call %.0f µs = raw OkHttp %.0f + begin %.0f (its commit is the one disk sync) + claim %.0f + attempt"
        + " record and transition %.0f + a separate transition %.0f (deferred: SQL, no sync) + the rest %.0f (Idem's"
        + " in-memory work, and the deferred writes' commits riding on the next begin)%n", m[0], m[1], m[2], m[3],
        m[4], m[5], m[0] - m[1] - journal);
  }

  /** The row's index, or -1 when the row filter left it out. */
  private static int find(List<Strategy> rows, String label) {
    for (int k = 0; k < rows.size(); k++) {
      if (rows.get(k).label().equals(label)) {
        return k;
      }
    }
    return -1;
  }

  private static String list(double[] v) {
    List<String> s = new ArrayList<>();
    for (double d : v) {
      s.add(String.format(Locale.ROOT, "%.0f", d));
    }
    return String.join(", ", s);
  }

  private static String list2(double[] v) {
    List<String> s = new ArrayList<>();
    for (double d : v) {
      s.add(String.format(Locale.ROOT, "%.2f", d));
    }
    return String.join(", ", s);
  }

  /** Each run's journal is deleted after its slice, so that a long run does not fill the disk. */
  private static void deleteRunDirectories(Path work) throws IOException {
    try (Stream<Path> dirs = Files.list(work)) {
      for (Path d : dirs.filter(Files::isDirectory).toList()) {
        deleteTree(d);
      }
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
