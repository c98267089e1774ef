package dev.idem.jdbc.support;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ChildJvm#destroy(Process)} lists {@code child.descendants()} and SIGKILLs them. For a child
 * that has already ended (and been reaped) that list is not empty when its pid has been reused: the
 * JDK's descendants() then finds the process that now holds the pid (the ended child's own start time
 * is not checked) and returns that stranger's children, and destroy kills them. {@link ChildProcesses}
 * calls destroy on every child it was given at the end of the test, however long ago it ended:
 * CrashLoopTest's killed cycles, FleetChaosTest's killed pods, the kill tests' first children that
 * died by themselves, ClientCrashTest's SIGKILLed first child (and Running.close() after terminate()).
 * With pid_max 32768 (this machine) and a long test on a shared CI host, a reused pid can belong to
 * another test's JVM, an mvn, or the shared PostgreSQL cluster's postmaster, whose children (backends)
 * would be SIGKILLed: the helper kills processes the test does not own. (The old code, destroyForcibly
 * on the child's own handle, checks the start time and never had this.)
 *
 * <p>Deterministic: the scenario runs in a child JVM in a private PID namespace ({@code unshare}),
 * where {@code ns_last_pid} hands the ended child's pid to a shell that has a {@code sleep} child; no
 * process outside that namespace is touched. Skipped where unshare is not permitted.
 */
class RvRtoday17DestroyOfEndedChildKillsStrangersTest {
  @TempDir
  Path dir;

  @Test
  void destroyingAChildThatEndedLeavesTheProcessThatReusedItsPidAlone() throws Exception {
    assumeTrue(unshareWorks(), "unshare --pid is not permitted here");
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Path out = dir.resolve("out.txt");
    Process ns = new ProcessBuilder(List.of("unshare", "--pid", "--fork", "--kill-child", "--mount-proc", java.toString(),
        "-Xmx64m", "-XX:+UseSerialGC", "-XX:-UseDynamicNumberOfCompilerThreads", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"), InNamespace.class.getName()))
        .redirectErrorStream(true).redirectOutput(out.toFile()).start();
    try {
      assertTrue(ns.waitFor(60, TimeUnit.SECONDS), "the namespace's JVM did not end:\n" + Files.readString(out));
    } finally {
      ns.descendants().forEach(ProcessHandle::destroyForcibly); // the namespace's PID 1: all in it end with it
      ns.destroyForcibly();
      ns.waitFor(10, TimeUnit.SECONDS);
    }
    String output = Files.readString(out);
    assumeTrue(output.contains("REUSED true"), "premise not reached (pid not reused):\n" + output);
    assertTrue(output.contains("STRANGER_CHILD_ALIVE true"),
        "ChildJvm.destroy of a child that had ended SIGKILLed the child of the process that reused its pid:\n"
            + output);
  }

  private static boolean unshareWorks() {
    try {
      Process p = new ProcessBuilder("unshare", "--pid", "--fork", "--mount-proc", "sh", "-c",
          "echo 99 > /proc/sys/kernel/ns_last_pid").redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return false;
      }
      return p.exitValue() == 0;
    } catch (Exception e) {
      return false;
    }
  }

  /** Runs as PID 1 of a private PID namespace. */
  public static final class InNamespace {
    public static void main(String[] args) throws Exception {
      for (int attempt = 0; attempt < 20; attempt++) {
        Process ended = new ProcessBuilder("true").start();
        ended.waitFor(); // ended and reaped: its pid is free
        long pid = ended.pid();
        Files.writeString(Path.of("/proc/sys/kernel/ns_last_pid"), Long.toString(pid - 1));
        // A stranger to the test: a shell with a child of its own, on the freed pid.
        Process stranger = new ProcessBuilder("sh", "-c", "sleep 300 & echo $!; wait").start();
        if (stranger.pid() != pid) {
          stranger.destroyForcibly().waitFor();
          continue;
        }
        long sleepPid = Long.parseLong(new java.io.BufferedReader(new java.io.InputStreamReader(
            stranger.getInputStream())).readLine().strip());
        System.out.println("REUSED true (pid " + pid + ", stranger's child " + sleepPid + ")");
        List<Long> listed = new ArrayList<>();
        ended.descendants().forEach(h -> listed.add(h.pid()));
        System.out.println("descendants of the ended child: " + listed);
        long t0 = System.nanoTime();
        ChildJvm.destroy(ended); // as ChildProcesses.close does for a child that ended long ago
        System.out.println("destroy took ms " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        boolean alive = ProcessHandle.of(sleepPid).map(ProcessHandle::isAlive).orElse(false);
        System.out.println("STRANGER_CHILD_ALIVE " + alive);
        System.exit(0);
      }
      System.out.println("REUSED false");
    }
  }
}
