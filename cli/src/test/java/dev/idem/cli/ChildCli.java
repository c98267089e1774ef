package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One run of {@link IdemCli#main} in a child JVM with a 64 MiB heap, for what only a process
 * shows: its memory bound, what reaches standard error when the JVM itself fails, and the exit
 * status {@code main} passes to {@code System.exit}.
 *
 * @param code the exit status
 * @param out what it printed on standard output
 * @param err what it printed on standard error
 */
record ChildCli(int code, String out, String err) {
  /** The child's heap: a few pages of whole 512 KiB records do not fit in it. */
  static final String HEAP = "-Xmx64m";
  /**
   * As docs/cli.md says to run the CLI on a class path: sqlite-jdbc loads its native library with
   * System.load, a restricted method, and from Java 24 on the JVM prints four WARNING lines about it
   * to standard error unless native access is enabled (the -all jar enables it in its manifest).
   * Java 17 accepts the option too. Without it a child's standard error is not the CLI's alone.
   */
  static final String NATIVE_ACCESS = "--enable-native-access=ALL-UNNAMED";

  static ChildCli run(Path dir, String... args) throws Exception {
    return runOn(System.getProperty("java.class.path"), dir, args);
  }

  /** As {@link #run}, on a class path of the caller's: one with a library left out, say. */
  static ChildCli runOn(String classPath, Path dir, String... args) throws Exception {
    return runOn(classPath, null, dir, args);
  }

  /**
   * As {@link #run}, in the working directory {@code workingDir}: what a relative (or empty) path
   * resolves against. Standard output and error go to files in {@code dir}, not in it.
   */
  static ChildCli runIn(Path workingDir, Path dir, String... args) throws Exception {
    return runOn(System.getProperty("java.class.path"), workingDir, dir, args);
  }

  private static ChildCli runOn(String classPath, Path workingDir, Path dir, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        HEAP, NATIVE_ACCESS, "-cp", classPath, IdemCli.class.getName()));
    cmd.addAll(List.of(args));
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    ProcessBuilder pb = new ProcessBuilder(cmd);
    if (workingDir != null) {
      pb.directory(workingDir.toFile());
    }
    Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      assertTrue(false, "the CLI did not finish in 120 s");
    }
    return new ChildCli(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  /** The first line of standard error, for a failure message (an OutOfMemoryError's trace is long). */
  String firstErrLine() {
    int nl = err.indexOf('\n');
    return nl < 0 ? err : err.substring(0, nl);
  }
}
