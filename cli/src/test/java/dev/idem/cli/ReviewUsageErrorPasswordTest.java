package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * {@code --jdbc-url} given twice (a wrapper script or shell alias that already passes the app's
 * URL, and the operator adds one) is bad usage, and picocli's message quotes both values whole:
 * {@code expected only one match but got (--dir=DIR | --jdbc-url=URL)={--jdbc-url=jdbc:postgresql://db/app?password=...}}.
 * The docs promise "A message that shows the URL never shows a password in it", and the CLI
 * redacts the URL in every message of its own; this one goes to standard error, into a cron mail,
 * a CI log or a terminal recording, with the database password in clear.
 *
 * <p>Found by a review on 2026-12-06.
 */
class ReviewUsageErrorPasswordTest {
  @Test
  void aJdbcUrlGivenTwiceIsRefusedWithoutPrintingItsPassword() {
    CliRun pg = CliRun.of("journal", "stats", "--jdbc-url", "jdbc:postgresql://db.internal/app?user=idem&password=pg-s3cret",
        "--jdbc-url", "jdbc:postgresql://db.internal/app?user=idem&password=pg-s3cret");
    CliRun h2 = CliRun.of("journal", "list", "--jdbc-url", "jdbc:h2:/var/lib/app/db;USER=sa;PASSWORD=h2-s3cret",
        "--jdbc-url", "jdbc:h2:/var/lib/app/db;USER=sa;PASSWORD=h2-s3cret");

    assertAll(
        () -> assertEquals(2, pg.code(), pg.err()),
        () -> assertFalse(pg.err().contains("pg-s3cret"), "the password is printed: " + pg.err()),
        () -> assertEquals(2, h2.code(), h2.err()),
        () -> assertFalse(h2.err().contains("h2-s3cret"), "the password is printed: " + h2.err()));
  }
}
