package dev.idem.jdbc.support;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No child of {@link ChildJvm}, nor a process it started, outlives the test that gave up on it or
 * closed it. Each child starts a JVM of its own ({@link SpawningChild}) whose pid it writes down.
 */
class ChildJvmTest {
  @TempDir
  Path dir;

  private final List<ProcessHandle> seen = new ArrayList<>();

  @AfterEach
  void endWhatIsLeft() {
    seen.forEach(ProcessHandle::destroyForcibly);
  }

  @Test
  void aRunThatTimesOutEndsTheChildAndWhatItStarted() throws Exception {
    Path pidFile = dir.resolve("leaf.pid");

    assertThrows(IllegalStateException.class,
        () -> ChildJvm.run(dir, List.of(), Duration.ofSeconds(10), SpawningChild.class, pidFile.toString()));

    assertTrue(Files.exists(pidFile), "premise: the child started its own JVM within the time");
    assertFalse(alive(pidFile), "the process the child started is ended when run gives up");
  }

  /** As when a test runs the child on a pool it shuts down with shutdownNow when it fails. */
  @Test
  void aRunWhoseWaitIsInterruptedEndsTheChildAndWhatItStarted() throws Exception {
    Path pidFile = dir.resolve("leaf.pid");
    CompletableFuture<Throwable> ended = new CompletableFuture<>();
    Thread waiting = new Thread(() -> {
      try {
        ChildJvm.run(dir, List.of(), Duration.ofSeconds(60), SpawningChild.class, pidFile.toString());
        ended.complete(null);
      } catch (Throwable t) {
        ended.complete(t);
      }
    }, "waits-for-the-child");
    waiting.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!Files.exists(pidFile)) {
      assertTrue(System.nanoTime() < deadline, "premise: the child started its own JVM");
      Thread.sleep(20); // a JVM starting another: nothing to wait on but the file it writes
    }
    assertTrue(alive(pidFile), "premise: the child runs the JVM it started");
    long leaf = pid(pidFile);
    ProcessHandle child = ProcessHandle.current().children().filter(c -> c.children().anyMatch(d -> d.pid() == leaf))
        .findFirst().orElseThrow(() -> new AssertionError("premise: the child runs the JVM it started"));
    seen.add(child);

    waiting.interrupt();

    assertInstanceOf(InterruptedException.class, ended.get(30, TimeUnit.SECONDS), "run gave up on the interrupt");
    assertFalse(child.isAlive(), "the child is ended");
    assertFalse(alive(pidFile), "and so is the process it started");
  }

  @Test
  void closingARunningChildEndsItAndWhatItStarted() throws Exception {
    Path pidFile = dir.resolve("leaf.pid");
    ProcessHandle child;
    try (ChildJvm.Running running = ChildJvm.start("READY", SpawningChild.class, pidFile.toString())) {
      running.awaitReady(Duration.ofSeconds(60));
      assertTrue(alive(pidFile), "premise: the child runs the JVM it started");
      long leaf = pid(pidFile);
      child = ProcessHandle.current().children().filter(c -> c.children().anyMatch(d -> d.pid() == leaf))
          .findFirst().orElseThrow(() -> new AssertionError("premise: the child runs the JVM it started"));
      seen.add(child);
    }
    assertFalse(child.isAlive(), "the child is ended by close");
    assertFalse(alive(pidFile), "and so is the process it started");
  }

  @Test
  void terminatingARunningChildEndsWhatItLeftRunning() throws Exception {
    Path pidFile = dir.resolve("leaf.pid");
    try (ChildJvm.Running running = ChildJvm.start("READY", SpawningChild.class, pidFile.toString())) {
      running.awaitReady(Duration.ofSeconds(60));
      assertTrue(alive(pidFile), "premise: the child runs the JVM it started");

      running.terminate(Duration.ofSeconds(30));

      // SIGKILL is delivered at once, but the process takes a moment to go: wait for it (bounded).
      Optional<ProcessHandle> leaf = ProcessHandle.of(pid(pidFile));
      if (leaf.isPresent()) {
        leaf.get().onExit().completeOnTimeout(null, 10, TimeUnit.SECONDS).join();
      }
      assertFalse(alive(pidFile), "the process the child started, left behind by its SIGTERM, is ended");
    }
  }

  private boolean alive(Path pidFile) throws Exception {
    Optional<ProcessHandle> p = ProcessHandle.of(pid(pidFile));
    p.ifPresent(seen::add);
    return p.map(ProcessHandle::isAlive).orElse(false);
  }

  private static long pid(Path pidFile) throws Exception {
    return Long.parseLong(Files.readString(pidFile).strip());
  }
}
