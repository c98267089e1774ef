package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;

/** A child that never reports started is not left running when {@link ChildJvm#await} gives up. */
class ChildJvmTest {
  @TempDir
  Path dir;

  @Test
  void aChildThatNeverStartsIsEndedWithWhatItStarted() throws Exception {
    Path log = dir.resolve("child.log");
    Path pidFile = dir.resolve("leaf.pid");
    Process child = ChildJvm.start(log, List.of(), NeverStartedChild.class, List.of(pidFile.toString()));
    Optional<ProcessHandle> leaf = Optional.empty();
    try {
      ChildJvm.await(() -> Files.exists(pidFile), child, log, "premise: the child started its own JVM");
      leaf = ProcessHandle.of(Long.parseLong(Files.readString(pidFile).strip()));

      assertThrows(AssertionFailedError.class,
          () -> ChildJvm.await(() -> false, child, log, "the child started", Duration.ofMillis(200)));

      assertFalse(child.isAlive(), "the child is ended when await fails");
      assertFalse(leaf.isPresent() && leaf.get().isAlive(), "and so is the process it started");
    } finally {
      leaf.ifPresent(ProcessHandle::destroyForcibly);
      child.destroyForcibly();
    }
  }
}
