package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exit-status table promises "every error is one line on standard error, starting
 * {@code idem: }", and {@code IdemCli.main} quiets slf4j so that a library's log lines do not
 * precede the CLI's own. The PostgreSQL driver logs through java.util.logging, which the CLI leaves
 * at its default (WARNING, to standard error, two lines each with a timestamp): a typo in the port
 * of a {@code --jdbc-url} ({@code :54x32}, {@code :99999}) prints the driver's
 * {@code Dec 06, 2026 12:22:34 AM org.postgresql.util.PGPropertyUtil convertPgPortToInt} /
 * {@code WARNING: JDBC URL invalid port number} before the one line, and a script or monitor that
 * reads the first line of standard error reports a timestamp.
 *
 * <p>Found by a review on 2026-12-06.
 */
class ReviewDriverLogNoiseTest {
  @TempDir
  Path dir;

  @Test
  void aPostgresUrlWithABadPortFailsWithOneLineOnStandardError() throws Exception {
    ChildCli r = ChildCli.run(dir, "journal", "stats", "--jdbc-url", "jdbc:postgresql://127.0.0.1:54x32/app");

    assertEquals(1, r.code(), r.err());
    assertEquals(1, r.err().lines().count(), "one idem: line, nothing else:\n" + r.err());
    assertEquals(true, r.err().startsWith(IdemCli.PREFIX), "the first line is the CLI's:\n" + r.err());
  }
}
