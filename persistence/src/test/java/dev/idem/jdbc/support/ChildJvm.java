package dev.idem.jdbc.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Runs a main class of the test classpath in a fresh JVM and collects its exit code and output. */
public final class ChildJvm {
  /** What the child did. */
  public record Result(int exitCode, String output) {
  }

  private ChildJvm() {
  }

  public static Result run(Path workDir, Class<?> mainClass, String... args) throws IOException, InterruptedException {
    return run(workDir, List.of(), mainClass, args);
  }

  /** Like {@link #run(Path, Class, String...)}, with options for the child JVM (such as -D properties). */
  public static Result run(Path workDir, List<String> jvmOptions, Class<?> mainClass, String... args)
      throws IOException, InterruptedException {
    return run(workDir, jvmOptions, Duration.ofSeconds(60), mainClass, args);
  }

  /** Like {@link #run(Path, List, Class, String...)}, giving up after {@code timeout}. */
  static Result run(Path workDir, List<String> jvmOptions, Duration timeout, Class<?> mainClass, String... args)
      throws IOException, InterruptedException {
    List<String> command = command(jvmOptions, mainClass, args);
    Path log = Files.createTempFile(workDir, "child", ".log");
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    boolean finished = false;
    try {
      finished = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } finally {
      // Also when the wait is interrupted: a child left running holds its files, ports and CPU.
      if (!finished) {
        destroy(p);
      }
    }
    if (!finished) {
      throw new IllegalStateException("child JVM " + mainClass.getSimpleName() + " did not finish in " + timeout
          + ":\n" + Files.readString(log));
    }
    return new Result(p.exitValue(), Files.readString(log));
  }

  /**
   * Ends {@code child} and every process it started (SIGKILL), and waits (at most 10 s each) for them
   * to go, so that none outlives the test. The descendants are listed first: once the child is gone
   * they are no longer its descendants. And listed only if the child has not been reaped before the
   * listing: the JDK lists an ended child's descendants by its pid alone, so once that pid is reused
   * they are the children of a process the test does not own (review rtoday17). Checked before, not
   * after: a child that ends while they are listed leaves them orphans, still to be ended (rtoday20).
   */
  public static void destroy(Process child) {
    List<ProcessHandle> descendants = child.isAlive() ? new ArrayList<>(child.descendants().toList()) : List.of();
    descendants.forEach(ProcessHandle::destroyForcibly);
    // The Process itself, not its pid: an ended child's handle, and even its onExit, wait on whoever
    // has its pid now; waitFor reads the child's own exit.
    child.destroyForcibly();
    try {
      child.waitFor(10, TimeUnit.SECONDS);
      for (ProcessHandle p : descendants) {
        p.onExit().get(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // killed forcibly; nothing more to do than wait, which the bound ended
    }
  }

  /**
   * Starts {@code mainClass} in a child JVM and returns at once, for a test that acts on the running
   * child (sends it SIGTERM, say) once it has printed {@code readyLine}.
   */
  public static Running start(String readyLine, Class<?> mainClass, String... args) throws IOException {
    Process p = new ProcessBuilder(command(List.of(), mainClass, args)).redirectErrorStream(true).start();
    return new Running(p, readyLine, mainClass.getSimpleName());
  }

  private static List<String> command(List<String> jvmOptions, Class<?> mainClass, String... args) {
    String java = ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> command = new ArrayList<>(List.of(java, "-Xshare:auto", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"), "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
    command.addAll(jvmOptions);
    command.add(mainClass.getName());
    command.addAll(List.of(args));
    return command;
  }

  /** A child JVM started by {@link #start}; its output is read as it comes, by a thread of its own. */
  public static final class Running implements AutoCloseable {
    private final Process process;
    private final String name;
    private final StringBuffer output = new StringBuffer();
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    private final Thread reader;

    private Running(Process process, String readyLine, String name) {
      this.process = process;
      this.name = name;
      this.reader = new Thread(() -> {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8))) {
          for (String line = in.readLine(); line != null; line = in.readLine()) {
            output.append(line).append('\n');
            if (line.equals(readyLine)) {
              ready.complete(null);
            }
          }
        } catch (IOException e) {
          output.append("[reading the child's output failed: ").append(e).append("]\n");
        } finally {
          ready.complete(null);  // ended without the line: awaitReady reports the output
        }
      }, "child-jvm-output");
      reader.setDaemon(true);
      reader.start();
    }

    /** Waits until the child printed its ready line. */
    public void awaitReady(Duration timeout) throws InterruptedException {
      try {
        ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException | TimeoutException e) {
        throw new IllegalStateException("child JVM " + name + " not ready after " + timeout + ":\n" + output, e);
      }
      if (!process.isAlive()) {
        throw new IllegalStateException("child JVM " + name + " ended before it was ready:\n" + output);
      }
    }

    /**
     * Sends SIGTERM ({@link Process#destroy()}) and waits for the child to exit; what it started and
     * left behind is ended too.
     */
    public Result terminate(Duration timeout) throws InterruptedException {
      // Listed before the SIGTERM: once the child is gone, what it started is no longer its descendants.
      // Not for a child already reaped: its pid may be another process's now (see destroy).
      List<ProcessHandle> started = process.isAlive() ? process.descendants().toList() : List.of();
      process.destroy();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        destroy(process);
        throw new IllegalStateException("child JVM " + name + " did not exit within " + timeout + " of SIGTERM:\n"
            + output);
      }
      started.forEach(ProcessHandle::destroyForcibly);
      reader.join(timeout.toMillis());
      return new Result(process.exitValue(), output.toString());
    }

    /** Ends the child and what it started, at once (SIGKILL), if they still run. */
    @Override
    public void close() {
      destroy(process);
    }
  }
}
