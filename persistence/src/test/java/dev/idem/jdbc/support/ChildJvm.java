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
    List<String> command = command(jvmOptions, mainClass, args);
    Path log = Files.createTempFile(workDir, "child", ".log");
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("child JVM " + mainClass.getSimpleName() + " did not finish in 60 s:\n"
          + Files.readString(log));
    }
    return new Result(p.exitValue(), Files.readString(log));
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

    /** Sends SIGTERM ({@link Process#destroy()}) and waits for the child to exit. */
    public Result terminate(Duration timeout) throws InterruptedException {
      process.destroy();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException("child JVM " + name + " did not exit within " + timeout + " of SIGTERM:\n"
            + output);
      }
      reader.join(timeout.toMillis());
      return new Result(process.exitValue(), output.toString());
    }

    @Override
    public void close() {
      process.destroyForcibly();
    }
  }
}
