package dev.idem.examples.childjvm;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Starts the examples' child JVMs (the crash loop's, the flavour matrix's, the exit tests'): a main
 * class of this JVM's class path, in a fresh JVM that starts fast ({@code -Xshare:auto},
 * C1 only) and logs only errors, with its output and errors merged. The caller redirects the
 * output to a file and decides how the child ends (SIGKILL, SIGTERM, or on its own).
 */
public final class ChildJvm {
  private ChildJvm() {
  }

  /**
   * @param mainClass the child's main class, on this JVM's class path
   * @param args its arguments
   * @return a process builder for the child; redirect its output before starting it
   */
  public static ProcessBuilder builder(Class<?> mainClass, List<String> args) {
    String java = ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> command = new ArrayList<>(List.of(java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp",
        System.getProperty("java.class.path"), "-Dorg.slf4j.simpleLogger.defaultLogLevel=error",
        mainClass.getName()));
    command.addAll(args);
    return new ProcessBuilder(command).redirectErrorStream(true);
  }

  /**
   * Waits until the child's log has {@code line} (true), or the child ends or the time is up (false).
   *
   * @param p the child
   * @param log the file its output goes to
   * @param line a whole line, compared without surrounding blanks
   * @param timeout the longest to wait
   * @return whether the line appeared
   */
  public static boolean awaitLine(Process p, Path log, String line, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (Files.exists(log) && Files.readString(log).lines().anyMatch(l -> l.strip().equals(line))) {
        return true;
      }
      if (p.waitFor(2, TimeUnit.MILLISECONDS)) { // a child JVM starting up: poll its log
        return Files.exists(log) && Files.readString(log).lines().anyMatch(l -> l.strip().equals(line));
      }
    }
    return false;
  }
}
