package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.ChildJvm;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An app's H2 file database is open in the app's process ({@link H2AppChild}, a JVM of its own):
 * H2 lets one process open a file database, so every journal command on its {@code --jdbc-url}
 * fails, safely, with nothing read or written. But it said only "journal read-only open failed:
 * the journal file is locked by another process (... use PostgreSQL to share it between
 * processes) [SQLState 90020 ...]": not that the app holds it, nor the operator's two ways on: stop
 * the app, or share the database through H2 ({@code AUTO_SERVER=TRUE}, or a TCP server) in the
 * app's URL and the CLI's alike, which lets the read-only commands run beside the app.
 *
 * <p>Found by a review on 2026-12-05.
 */
class H2HeldByTheAppTest {
  @TempDir
  Path dir;

  @Test
  void aFileDatabaseTheAppHoldsIsExplainedWithWhatToDo() throws Exception {
    String url = "jdbc:h2:file:" + dir.resolve("app");
    try (ChildJvm.Running app = ChildJvm.start("ready", H2AppChild.class, url)) {
      app.awaitReady(Duration.ofSeconds(60));

      CliRun stats = CliRun.of("journal", "stats", "--jdbc-url", url);
      CliRun redrive = CliRun.of("journal", "redrive", "--jdbc-url", url, "--scope", "t", "--operation",
          "create-order", "--key", "k-1");

      for (CliRun r : new CliRun[] {stats, redrive}) {
        assertAll(
            () -> assertEquals(1, r.code(), r.out() + r.err()),
            () -> assertTrue(r.err().contains("the H2 database " + url + " is open in another process"), r.err()),
            () -> assertTrue(r.err().contains("Stop the app"), r.err()),
            () -> assertTrue(r.err().contains(";AUTO_SERVER=TRUE") && r.err().contains("jdbc:h2:tcp://"), r.err()));
      }
    }
  }

  /** What the message advises works: with AUTO_SERVER=TRUE in both URLs, stats reads beside the app. */
  @Test
  void withAutoServerInBothUrlsTheCliReadsBesideTheApp() throws Exception {
    String url = "jdbc:h2:file:" + dir.resolve("app") + ";AUTO_SERVER=TRUE";
    try (ChildJvm.Running app = ChildJvm.start("ready", H2AppChild.class, url)) {
      app.awaitReady(Duration.ofSeconds(60));

      CliRun stats = CliRun.of("journal", "stats", "--jdbc-url", url);

      assertEquals(0, stats.code(), stats.err());
      assertTrue(stats.out().contains("PENDING    1"), stats.out());
    }
  }
}
