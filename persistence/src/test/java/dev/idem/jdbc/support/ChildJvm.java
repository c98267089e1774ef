package dev.idem.jdbc.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

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
    String java = ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> command = new ArrayList<>(List.of(java, "-Xshare:auto", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"), "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
    command.addAll(jvmOptions);
    command.add(mainClass.getName());
    command.addAll(List.of(args));
    Path log = Files.createTempFile(workDir, "child", ".log");
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("child JVM " + mainClass.getSimpleName() + " did not finish in 60 s:\n"
          + Files.readString(log));
    }
    return new Result(p.exitValue(), Files.readString(log));
  }
}
