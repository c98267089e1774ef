package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal, the guard's store and the inbox each have a background committer; in a thread dump
 * its name says which store it serves (all three were "idem-journal-flusher").
 */
class FlusherThreadNameTest {
  @Test
  void theFlusherThreadNamesItsStore(@TempDir Path dir) throws Exception {
    try (SingleConnectionStore store = new SingleConnectionStore("webhook inbox", "inbox",
        DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("inbox.db")), null, Duration.ofMinutes(10), false)) {
      // A deferred write schedules its commit on the flusher, which starts the thread.
      store.write(Durability.DEFERRED, null, s -> s.connection().createStatement().executeUpdate(
          "CREATE TABLE t (x INTEGER)"));
      Set<String> names = Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
          .collect(Collectors.toSet());
      assertTrue(names.contains("idem-webhook-inbox-flusher"), names.toString());
    }
  }
}
