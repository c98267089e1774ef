package dev.idem.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a main class of this module in a JVM of its own, on this JVM's class path: the profile and
 * the resume of P4 must not share a heap or a sampler with the server and the other rows. (The
 * persistence module's ChildJvm is in its test-jar and caps children at C1, which would distort a
 * profile; this one runs the full JIT.)
 */
final class ChildJvm {
  private ChildJvm() {
  }

  /**
   * Runs {@code mainClass} and returns what it printed.
   *
   * @throws IllegalStateException if it does not exit 0 within {@code timeoutSeconds}
   */
  static String run(Path log, List<String> jvmOptions, Class<?> mainClass, long timeoutSeconds, String... args)
      throws IOException, InterruptedException {
    String java = ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
    command.addAll(jvmOptions);
    command.add(mainClass.getName());
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
      throw new IllegalStateException(mainClass.getSimpleName() + " did not finish in " + timeoutSeconds + " s; see " + log);
    }
    String out = Files.readString(log);
    if (p.exitValue() != 0) {
      throw new IllegalStateException(mainClass.getSimpleName() + " exited " + p.exitValue() + ":\n" + out);
    }
    return out;
  }
}
