package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A Spring Boot app in a child JVM, for the tests that kill one: the test's own class path, a small
 * heap, Boot's logging off (slf4j-simple at WARN), and its output in a log file that a failure
 * quotes. The kill tests share it so that every child starts the same way.
 */
final class ChildJvm {
  private static final long WAIT_SECONDS = 90;

  private ChildJvm() {}

  /**
   * Starts {@code main} with {@code args}.
   *
   * @param log where the child's output goes
   * @param systemProperties {@code -Dname=value} options, before the main class
   */
  static Process start(Path log, List<String> systemProperties, Class<?> main, List<String> args) throws IOException {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    List<String> cmd = new ArrayList<>(List.of(java.toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC", "-Dorg.springframework.boot.logging.LoggingSystem=none",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
    cmd.addAll(systemProperties);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    cmd.addAll(args);
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  /**
   * Waits until {@code condition} holds, failing (with the child's log) if the child dies first or
   * {@value #WAIT_SECONDS} s pass.
   */
  static void await(BooleanSupplier condition, Process child, Path log, String what)
      throws IOException, InterruptedException {
    await(condition, child, log, what, Duration.ofSeconds(WAIT_SECONDS));
  }

  /** As {@link #await(BooleanSupplier, Process, Path, String)}, failing after {@code timeout}. */
  static void await(BooleanSupplier condition, Process child, Path log, String what, Duration timeout)
      throws IOException, InterruptedException {
    boolean met = false;
    try {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (!condition.getAsBoolean()) {
        assertTrue(child.isAlive(), what + ": the child died: " + Files.readString(log));
        assertTrue(System.nanoTime() < deadline, what + ": not within " + timeout.toSeconds() + " s");
        Thread.sleep(50); // a child JVM at work: nothing to wait on but what it writes
      }
      met = true;
    } finally {
      // The caller gets no Process back to end when this throws: a child left running would hold
      // its port, its files and a share of the machine past the test.
      if (!met) {
        destroy(child);
      }
    }
  }

  /** Ends {@code child} and every process it started, and waits (bounded) for them to go. */
  static void destroy(Process child) {
    dev.idem.jdbc.support.ChildJvm.destroy(child); // the modules' one way to end a child: see there
  }
}
