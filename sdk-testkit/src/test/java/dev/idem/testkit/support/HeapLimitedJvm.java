package dev.idem.testkit.support;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * For the adapters' streaming tests: runs a main class in a child JVM with a 32 MiB heap (so that a
 * body buffered anywhere ends in OutOfMemoryError), and reads the {@code name=number} figures it
 * prints. Test support, published in the test kit's test-jar: not part of its API.
 */
public final class HeapLimitedJvm {
  /** The longest a child may run. */
  private static final long TIMEOUT_SECONDS = 120;

  private HeapLimitedJvm() {
  }

  /**
   * Runs {@code mainClass} on this JVM's class path with {@code -Xmx32m}, its output in {@code
   * dir/child.log}.
   *
   * @return everything the child printed
   * @throws AssertionError if it does not finish within 120 s or exits with a non-zero status
   */
  public static String run(Path dir, Class<?> mainClass, String... args) throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "-Xmx32m", "-XX:TieredStopAtLevel=1", "-cp",
        System.getProperty("java.class.path"), "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        mainClass.getName()));
    command.addAll(List.of(args));
    Path log = dir.resolve("child.log");
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("child did not finish:\n" + Files.readString(log));
    }
    String out = Files.readString(log);
    if (p.exitValue() != 0) {
      throw new AssertionError("child exited with " + p.exitValue() + ":\n" + out);
    }
    return out;
  }

  /**
   * @return the number printed as {@code name=<digits>} in {@code output}
   * @throws AssertionError if there is none
   */
  public static long figure(String output, String name) {
    Matcher m = Pattern.compile(Pattern.quote(name) + "=(\\d+)").matcher(output);
    if (!m.find()) {
      throw new AssertionError(name + " missing in: " + output);
    }
    return Long.parseLong(m.group(1));
  }

  /** @return bytes allocated so far by all live threads (an HTTP client's own threads read bodies too) */
  public static long allocatedByAllThreads() {
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long sum = 0;
    for (long a : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
      sum += Math.max(0, a);
    }
    return sum;
  }
}
