package dev.idem.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Summarises a JFR recording of the client into where the time and the allocations go: the same
 * figures {@code jfr print --events jdk.ExecutionSample} and {@code jdk.ObjectAllocationSample}
 * would give, counted by frame.
 *
 * <ul>
 *   <li>CPU, self: the top frame of each execution sample, i.e. the method running.</li>
 *   <li>CPU, Idem inclusive: for each sample, every distinct {@code dev.idem} method on its stack;
 *       the share of samples in which the method (or something it called) was running. This is the
 *       per-call breakdown: fingerprint, snapshot, journal, interceptor bookkeeping.</li>
 *   <li>CPU by layer: the top frame's library (OkHttp and Okio, Idem, SQLite, Jackson, JDK...).</li>
 *   <li>Allocation: sampled bytes (the event's weight) by class allocated and by the innermost
 *       {@code dev.idem} frame that allocated them, per call.</li>
 *   <li>Native samples (threads in native code, such as SQLite and fsync) and lock waits over 1 ms.</li>
 * </ul>
 */
public final class JfrSummary {
  private static final int TOP = 25;

  private JfrSummary() {
  }

  /**
   * Summarises any recording of this benchmark's children again, or one made by hand:
   * {@code java -cp benchmarks/target/classes dev.idem.bench.JfrSummary file.jfr [calls]}.
   *
   * @param args the recording, then optionally the calls it holds (for bytes per call)
   * @throws IOException if the recording cannot be read
   */
  public static void main(String[] args) throws IOException {
    summarise(Path.of(args[0]), args.length > 1 ? Long.parseLong(args[1]) : 0, System.out);
  }

  /**
   * Writes the summary of {@code recording} to {@code out}.
   *
   * @param calls calls made while recording, to turn allocation into bytes per call
   */
  static void summarise(Path recording, long calls, PrintStream out) throws IOException {
    List<RecordedEvent> events = clientEvents(recording);
    List<RecordedEvent> cpu = ofType(events, "jdk.ExecutionSample");
    List<RecordedEvent> alloc = ofType(events, "jdk.ObjectAllocationSample");
    List<RecordedEvent> nativeSamples = ofType(events, "jdk.NativeMethodSample");
    List<RecordedEvent> monitors = ofType(events, "jdk.JavaMonitorEnter");
    List<RecordedEvent> parks = ofType(events, "jdk.ThreadPark");

    out.printf(Locale.ROOT, "execution samples: %d, native samples: %d, calls recorded: %d%n", cpu.size(),
        nativeSamples.size(), calls);
    table(out, "CPU by layer (top frame)", count(cpu, e -> Set.of(layer(top(e)))), cpu.size(), -1);
    table(out, "CPU, self (top frame)", count(cpu, e -> Set.of(name(top(e)))), cpu.size(), -1);
    table(out, "CPU by innermost Idem frame (what Idem code, or the library it called, was running)",
        count(cpu, e -> Set.of(innermostIdem(e))), cpu.size(), -1);
    table(out, "CPU, Idem methods inclusive (share of samples with the method on the stack)",
        count(cpu, JfrSummary::idemMethods), cpu.size(), -1);

    double totalBytes = alloc.stream().mapToDouble(e -> e.getLong("weight")).sum();
    out.printf(Locale.ROOT, "%nallocation: %.0f sampled bytes, %.0f bytes per call%n", totalBytes,
        calls > 0 ? totalBytes / calls : 0);
    table(out, "allocation by innermost Idem frame (bytes per call)",
        weigh(alloc, e -> innermostIdem(e), e -> e.getLong("weight")), totalBytes, calls);
    table(out, "allocation by class (bytes per call)",
        weigh(alloc, e -> e.getClass("objectClass").getName(), e -> e.getLong("weight")), totalBytes, calls);
    table(out, "allocation by top frame (bytes per call)",
        weigh(alloc, e -> name(top(e)), e -> e.getLong("weight")), totalBytes, calls);

    table(out, "native samples by innermost Java frame", count(nativeSamples, e -> Set.of(name(top(e)))),
        nativeSamples.size(), -1);
    table(out, "native samples by innermost Idem frame", count(nativeSamples, e -> Set.of(innermostIdem(e))),
        nativeSamples.size(), -1);

    double monitorMs = monitors.stream().mapToDouble(e -> e.getDuration().toNanos() / 1e6).sum();
    out.printf(Locale.ROOT, "%nmonitor waits >= 1 ms: %d, %.0f ms in all%n", monitors.size(), monitorMs);
    table(out, "monitor waits by lock class and innermost Idem frame (ms)",
        weigh(monitors, e -> e.getClass("monitorClass").getName() + " @ " + innermostIdem(e),
            e -> e.getDuration().toNanos() / 1e6), monitorMs, -1);
    double parkMs = parks.stream().mapToDouble(e -> e.getDuration().toNanos() / 1e6).sum();
    out.printf(Locale.ROOT, "%nparks >= 1 ms: %d, %.0f ms in all%n", parks.size(), parkMs);
    table(out, "parks by innermost Idem frame (ms)", weigh(parks, JfrSummary::innermostIdem,
        e -> e.getDuration().toNanos() / 1e6), parkMs, -1);
  }

  /** The top {@link #TOP} rows of one section, as "share  [per call]  key". */
  private static void table(PrintStream out, String title, Map<String, Double> byKey, double total, long calls) {
    out.printf("%n%s%n", title);
    if (total <= 0) {
      out.println("  (none)");
      return;
    }
    byKey.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed()).limit(TOP)
        .forEach(e -> {
          if (calls > 0) {
            out.printf(Locale.ROOT, "  %5.1f%%  %8.0f B  %s%n", 100 * e.getValue() / total, e.getValue() / calls,
                e.getKey());
          } else {
            out.printf(Locale.ROOT, "  %5.1f%%  %s%n", 100 * e.getValue() / total, e.getKey());
          }
        });
  }

  /**
   * The benchmark's printed digest of a recording: allocation per call, then the top {@code n} CPU
   * rows by innermost Idem frame ("share  frame").
   */
  static List<String> digest(Path recording, long calls, int n) throws IOException {
    List<RecordedEvent> events = clientEvents(recording);
    List<RecordedEvent> cpu = ofType(events, "jdk.ExecutionSample");
    double bytes = ofType(events, "jdk.ObjectAllocationSample").stream().mapToDouble(e -> e.getLong("weight")).sum();
    List<String> lines = new java.util.ArrayList<>();
    lines.add(String.format(Locale.ROOT, "allocated about %,.0f bytes per call; %d CPU samples, by innermost Idem"
        + " frame:", calls > 0 ? bytes / calls : 0, cpu.size()));
    count(cpu, e -> Set.of(innermostIdem(e))).entrySet().stream()
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed()).limit(n)
        .map(e -> String.format(Locale.ROOT, "  %5.1f%%  %s", 100 * e.getValue() / cpu.size(), e.getKey()))
        .forEach(lines::add);
    return lines;
  }

  /**
   * The calling threads' CPU per call split by component: each Java execution sample is put in one
   * component, the JDK's network I/O if its top frame is that, else the library of its innermost
   * frame outside the JDK (OkHttp and Okio, the SQLite driver), else by its innermost Idem frame,
   * and each component gets its share of the samples times {@code cpuMicrosPerCall}, the CPU per call
   * measured on the same threads. Native code (SQLite's C, system calls) is not sampled as
   * execution, so its CPU is spread over the components in proportion; the Java frames that called
   * it (the JDBC driver, the socket) are in their own rows.
   *
   * @return component to CPU µs per call, largest first
   */
  static Map<String, Double> cpuByComponent(Path recording, double cpuMicrosPerCall) throws IOException {
    List<RecordedEvent> cpu = ofType(clientEvents(recording), "jdk.ExecutionSample");
    Map<String, Double> counts = count(cpu, e -> Set.of(component(e)));
    Map<String, Double> out = new LinkedHashMap<>();
    counts.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .forEach(e -> out.put(e.getKey(), cpu.isEmpty() ? 0 : cpuMicrosPerCall * e.getValue() / cpu.size()));
    return out;
  }

  /** The component a sample's CPU belongs to (see {@link #cpuByComponent}). */
  private static String component(RecordedEvent e) {
    String topName = name(top(e));
    if (topName.startsWith("sun.nio.") || topName.startsWith("java.net.") || topName.startsWith("sun.net.")) {
      return "JDK network I/O";
    }
    // The library running decides next: the innermost frame that is not the JDK's, so that the JDK
    // code a library calls (its collections, strings, locks) counts as the library's. OkHttp's own
    // work runs under the adapter's interceptor frame; counted by the innermost Idem frame, what
    // OkHttp spent in the JDK went to the adapter (44 of the adapter's 53 samples in an in-memory
    // recording at 32 threads, 2026-12-03 08:37).
    String library = name(innermostOutsideJdk(e));
    if (library.startsWith("org.sqlite.")) {
      return "SQLite driver and its native calls";
    } else if (library.startsWith("okhttp3.") || library.startsWith("okio.") || library.startsWith("kotlin")) {
      return "OkHttp and Okio";
    }
    String idem = innermostIdem(e);
    if (idem.startsWith("(")) {
      return "JDK other, outside Idem (threads, locks, collections)";
    } else if (idem.startsWith("dev.idem.jdbc.internal.RecordCodec") || idem.startsWith("dev.idem.jdbc.internal.RequestCheck")
        || idem.startsWith("dev.idem.jdbc.internal.IsoText") || idem.startsWith("dev.idem.jdbc.internal.SecretHeaders")) {
      return "journal codec: JSON, checksum";
    } else if (idem.startsWith("dev.idem.jdbc.")) {
      return "journal: store, SQL, group commit";
    } else if (idem.startsWith("dev.idem.core.fingerprint.") || idem.contains("JsonCanonicalizer")) {
      return "fingerprint: canonical JSON, SHA-256";
    } else if (idem.startsWith("dev.idem.core.InMemoryJournal")) {
      return "in-memory journal";
    } else if (idem.startsWith("dev.idem.okhttp.")) {
      return "OkHttp adapter: snapshot, capture";
    } else if (idem.startsWith("dev.idem.core.")) {
      return "executor: attempt loop, events, guard";
    }
    return "other Idem";
  }

  /**
   * The events of the code under test: the recording JVM's main thread only starts the recording and
   * waits (starting a recording instruments classes with ASM, which would otherwise dominate the
   * allocation figures), and JFR's own threads are not the client's cost.
   */
  private static List<RecordedEvent> clientEvents(Path recording) throws IOException {
    return RecordingFile.readAllEvents(recording).stream().filter(e -> {
      jdk.jfr.consumer.RecordedThread t = e.getThread();
      String name = t == null || t.getJavaName() == null ? "" : t.getJavaName();
      return !name.equals("main") && !name.startsWith("JFR");
    }).toList();
  }

  private static List<RecordedEvent> ofType(List<RecordedEvent> events, String type) {
    return events.stream().filter(e -> e.getEventType().getName().equals(type)).toList();
  }

  private static Map<String, Double> count(List<RecordedEvent> events,
      java.util.function.Function<RecordedEvent, Set<String>> keys) {
    Map<String, Double> m = new HashMap<>();
    for (RecordedEvent e : events) {
      for (String k : keys.apply(e)) {
        m.merge(k, 1.0, Double::sum);
      }
    }
    return m;
  }

  private static Map<String, Double> weigh(List<RecordedEvent> events,
      java.util.function.Function<RecordedEvent, String> key, ToDoubleFunction<RecordedEvent> weight) {
    Map<String, Double> m = new LinkedHashMap<>();
    for (RecordedEvent e : events) {
      m.merge(key.apply(e), weight.applyAsDouble(e), Double::sum);
    }
    return m;
  }

  private static RecordedFrame top(RecordedEvent e) {
    RecordedStackTrace st = e.getStackTrace();
    return st == null || st.getFrames().isEmpty() ? null : st.getFrames().get(0);
  }

  /** The innermost frame whose class is not the JDK's, or null if every frame is. */
  private static RecordedFrame innermostOutsideJdk(RecordedEvent e) {
    RecordedStackTrace st = e.getStackTrace();
    if (st != null) {
      for (RecordedFrame f : st.getFrames()) {
        String type = f.getMethod() == null ? "" : f.getMethod().getType().getName();
        if (!(type.startsWith("java.") || type.startsWith("javax.") || type.startsWith("jdk.")
            || type.startsWith("sun.") || type.startsWith("com.sun."))) {
          return f;
        }
      }
    }
    return null;
  }

  private static Set<String> idemMethods(RecordedEvent e) {
    Set<String> s = new HashSet<>();
    RecordedStackTrace st = e.getStackTrace();
    if (st != null) {
      for (RecordedFrame f : st.getFrames()) {
        if (isIdem(f)) {
          s.add(name(f));
        }
      }
    }
    return s;
  }

  private static String innermostIdem(RecordedEvent e) {
    RecordedStackTrace st = e.getStackTrace();
    if (st != null) {
      for (RecordedFrame f : st.getFrames()) {
        if (isIdem(f)) {
          return name(f);
        }
      }
    }
    return "(no Idem frame)";
  }

  private static boolean isIdem(RecordedFrame f) {
    String type = f.getMethod() == null ? "" : f.getMethod().getType().getName();
    return type.startsWith("dev.idem.") && !type.startsWith("dev.idem.bench.");
  }

  private static String name(RecordedFrame f) {
    if (f == null || f.getMethod() == null) {
      return "(unknown)";
    }
    RecordedMethod m = f.getMethod();
    return m.getType().getName() + "." + m.getName();
  }

  private static String layer(RecordedFrame f) {
    String n = name(f);
    if (n.startsWith("dev.idem.bench.")) {
      return "benchmark harness";
    } else if (n.startsWith("dev.idem.jdbc.")) {
      return "Idem persistence (dev.idem.jdbc)";
    } else if (n.startsWith("dev.idem.okhttp.")) {
      return "Idem OkHttp adapter";
    } else if (n.startsWith("dev.idem.")) {
      return "Idem core";
    } else if (n.startsWith("okhttp3.") || n.startsWith("okio.") || n.startsWith("kotlin")) {
      return "OkHttp, Okio, Kotlin";
    } else if (n.startsWith("org.sqlite.")) {
      return "sqlite-jdbc";
    } else if (n.startsWith("com.fasterxml.jackson.")) {
      return "Jackson";
    } else if (n.startsWith("sun.nio.") || n.startsWith("java.net.") || n.startsWith("sun.net.")
        || n.startsWith("java.nio.")) {
      return "JDK network and NIO";
    } else if (n.startsWith("java.") || n.startsWith("jdk.") || n.startsWith("sun.")) {
      return "JDK other (" + n.substring(0, n.indexOf('.', n.indexOf('.') + 1) > 0
          ? n.indexOf('.', n.indexOf('.') + 1) : n.length()) + ")";
    }
    return "other";
  }
}
