package dev.idem.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * This JVM's CPU time by thread name, from Linux's {@code /proc/self/task}: it sees the threads
 * Java's ThreadMXBean does not (the JIT compilers, the collector), which a resume on a cold JVM
 * spends much in. Empty elsewhere.
 */
final class ThreadCpu {
  private ThreadCpu() {
  }

  /** CPU nanoseconds (user and system) of the live threads, summed by name without its trailing number. */
  static Map<String, Long> byName() {
    Map<String, Long> out = new HashMap<>();
    Path tasks = Path.of("/proc/self/task");
    if (!Files.isDirectory(tasks)) {
      return out;
    }
    long nanosPerTick = 1_000_000_000L / 100;  // USER_HZ is 100 on Linux
    try (Stream<Path> list = Files.list(tasks)) {
      for (Path task : (Iterable<Path>) list::iterator) {
        try {
          String stat = Files.readString(task.resolve("stat"));
          int open = stat.indexOf('(');
          int close = stat.lastIndexOf(')');
          String name = stat.substring(open + 1, close).replaceAll("[0-9]+$", "").trim();
          String[] f = stat.substring(close + 2).split(" ");
          long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);  // utime, stime
          out.merge(name, ticks * nanosPerTick, Long::sum);
        } catch (IOException | RuntimeException e) {
          // the thread ended while it was read
        }
      }
    } catch (IOException e) {
      return out;
    }
    return out;
  }

  /** What each name spent since {@code before} (threads that ended in between are not counted). */
  static Map<String, Long> since(Map<String, Long> before) {
    Map<String, Long> now = byName();
    now.replaceAll((name, nanos) -> nanos - before.getOrDefault(name, 0L));
    return now;
  }

  /** The names that spent anything, most first, in microseconds per operation. */
  static String perOperation(Map<String, Long> spent, long operations) {
    StringBuilder sb = new StringBuilder();
    spent.entrySet().stream().filter(e -> e.getValue() > 0)
        .sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
        .forEach(e -> sb.append(String.format(Locale.ROOT, "%s %.0f; ", e.getKey(),
            e.getValue() / 1e3 / Math.max(1, operations))));
    return sb.length() == 0 ? "n/a" : sb.toString();
  }
}
