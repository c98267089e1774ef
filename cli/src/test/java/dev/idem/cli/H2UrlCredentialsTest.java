package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.file.Path;
import java.time.Instant;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --jdbc-url jdbc:h2:...} is documented as "an app's own H2 database"; H2's own way to give
 * the credentials is in the URL ({@code jdbc:h2:file:DIR/app;USER=sa;PASSWORD=pw}), and that URL
 * opens the database with any H2 client. The CLI always sets the DataSource's user and password too
 * ({@code ""} when {@code --user} and {@code IDEM_JDBC_PASSWORD} are absent), so H2 refuses every
 * URL that carries its credentials with "Duplicate property" (90066), which the CLI reports as
 * "journal read-only open failed: a database error [SQLState 90066, vendor code 90066]": the
 * operator learns nothing about why a URL that works everywhere else fails here.
 *
 * <p>Found by a review on 2026-12-04.
 */
class H2UrlCredentialsTest {
  @TempDir
  Path dir;

  @Test
  void anH2UrlCarryingItsCredentialsOpensTheJournal() throws Exception {
    String base = "jdbc:h2:file:" + dir.resolve("app");
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL(base);
    ds.setUser("sa");
    ds.setPassword("pw");
    try (JdbcJournal app = JdbcJournal.dataSource(ds).closeOnShutdown(false).open()) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
      app.begin(new NewOperation(new OperationId("t", "create-order", IdempotencyKey.of("k-1")), null,
          Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
    }

    CliRun stats = CliRun.of("journal", "stats", "--jdbc-url", base + ";USER=sa;PASSWORD=pw");

    assertEquals(0, stats.code(), "a valid H2 URL with its credentials in it was refused: " + stats.err());
    assertTrue(stats.out().contains("PENDING    1"), stats.out());
  }

  /** The URL is echoed in messages ("no journal at URL"), never the password in it. */
  @Test
  void aMessageEchoingTheUrlNeverShowsItsPassword() {
    CliRun r = CliRun.of("journal", "stats", "--jdbc-url", "jdbc:h2:file:" + dir.resolve("nothing")
        + ";USER=sa;Password=s3cr3t-pw;MODE=PostgreSQL");

    assertEquals(1, r.code(), r.err());
    assertTrue(r.err().contains("no journal at") && r.err().contains("MODE=PostgreSQL"), r.err());
    assertFalse(r.err().contains("s3cr3t-pw"), r.err());
  }

  /** Two users, or two passwords, for one open: which one is meant is the operator's to say. */
  @Test
  void aUserGivenTwiceIsBadUsage() {
    CliRun r = CliRun.of("journal", "stats", "--jdbc-url", "jdbc:h2:file:" + dir.resolve("app") + ";USER=sa",
        "--user", "bob");

    assertEquals(2, r.code(), r.err());
    assertTrue(r.err().contains("--user and the URL's USER="), r.err());
  }
}
