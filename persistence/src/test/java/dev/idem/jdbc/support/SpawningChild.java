package dev.idem.jdbc.support;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * A child JVM that starts a JVM of its own (unless it is that one, {@code leaf}), writes that one's
 * pid to the file given, prints {@code READY} and sleeps. Both end on their own after a while, so
 * that a test that fails to end them leaves nothing for ever.
 */
public final class SpawningChild {
  private SpawningChild() {
  }

  public static void main(String[] args) throws Exception {
    if (!args[0].equals("leaf")) {
      Path java = Path.of(System.getProperty("java.home"), "bin", "java");
      Process leaf = new ProcessBuilder(List.of(java.toString(), "-Xmx32m", "-XX:+UseSerialGC", "-cp",
          System.getProperty("java.class.path"), SpawningChild.class.getName(), "leaf"))
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      Path pid = Path.of(args[0]);
      Path partial = pid.resolveSibling(pid.getFileName() + ".tmp");
      Files.writeString(partial, Long.toString(leaf.pid()));
      Files.move(partial, pid, StandardCopyOption.ATOMIC_MOVE);
      System.out.println("READY");
    }
    Thread.sleep(120_000);
  }
}
