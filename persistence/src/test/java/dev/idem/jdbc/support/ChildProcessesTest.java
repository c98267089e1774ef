package dev.idem.jdbc.support;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A test that fails while its children run leaves none of them, nor what they started, running. */
class ChildProcessesTest {
  @TempDir
  Path dir;

  private final List<ProcessHandle> seen = new ArrayList<>();

  @AfterEach
  void endWhatIsLeft() {
    seen.forEach(ProcessHandle::destroyForcibly);
  }

  @Test
  void aFailureWhileChildrenRunEndsThemAndWhatTheyStarted() throws Exception {
    Path firstPid = dir.resolve("first.pid");
    Path secondPid = dir.resolve("second.pid");
    List<Process> children = new ArrayList<>();

    assertThrows(AssertionError.class, () -> {
      try (ChildProcesses started = new ChildProcesses()) {
        children.add(started.add(spawn(firstPid)));
        children.add(started.add(spawn(secondPid)));
        children.forEach(c -> seen.add(c.toHandle()));
        awaitFile(firstPid);
        awaitFile(secondPid);
        assertTrue(alive(firstPid) && alive(secondPid), "premise: both children run what they started");
        throw new AssertionError("the test fails while both children run");
      }
    });

    for (Process child : children) {
      assertFalse(child.isAlive(), "a child is ended when the test fails");
    }
    assertFalse(alive(firstPid), "and so is what the first started");
    assertFalse(alive(secondPid), "and what the second started");
  }

  @Test
  void aChildAlreadyEndedIsLeftAsItIs() throws Exception {
    Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-version").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    try (ChildProcesses started = new ChildProcesses()) {
      started.add(child);
      assertTrue(child.waitFor(60, TimeUnit.SECONDS), "premise: the child ends on its own");
    }
    assertTrue(child.exitValue() == 0, "its exit is its own");
  }

  private static Process spawn(Path pidFile) throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    return new ProcessBuilder(java.toString(), "-Xmx64m", "-XX:+UseSerialGC", "-cp",
        System.getProperty("java.class.path"), SpawningChild.class.getName(), pidFile.toString())
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
  }

  private static void awaitFile(Path file) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!Files.exists(file)) {
      assertTrue(System.nanoTime() < deadline, "premise: the child started its own JVM");
      Thread.sleep(20); // a JVM starting another: nothing to wait on but the file it writes
    }
  }

  private boolean alive(Path pidFile) throws Exception {
    Optional<ProcessHandle> p = ProcessHandle.of(Long.parseLong(Files.readString(pidFile).strip()));
    p.ifPresent(seen::add);
    return p.map(ProcessHandle::isAlive).orElse(false);
  }
}
