package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * docs/cli.md: "A message that shows the URL never shows a password in it." A PostgreSQL URL the
 * driver cannot parse (a typo'd port) is echoed whole by the driver's own message, which the CLI
 * prints as its error line: the password in the URL's query lands on standard error, in the
 * operator's terminal, the CI log or the cron mail.
 */
class ReviewPgUrlPasswordTest {
  @Test
  void aPostgresUrlTheDriverCannotParseIsNeverEchoedWithItsPassword() {
    CliRun r = CliRun.of("journal", "stats", "--jdbc-url",
        "jdbc:postgresql://db.internal:54x2/orders?user=idem&password=hunter2-secret");
    assertEquals(1, r.code(), r.err());
    assertTrue(r.err().startsWith(IdemCli.PREFIX), r.err());
    assertFalse(r.err().contains("hunter2-secret"), "the password in the URL was printed: " + r.err());
  }
}
