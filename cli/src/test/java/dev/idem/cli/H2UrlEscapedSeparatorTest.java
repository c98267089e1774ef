package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
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
 * H2 splits a URL's settings at {@code ;} but reads {@code \;} (and any backslash-escaped
 * character) as part of the value: {@code ;USER=sa;PASSWORD=pa\;ss-tail} opens the database as
 * {@code sa} with the password {@code pa;ss-tail}, in any H2 client. The CLI rewrites the H2 URL
 * itself (the USER=, PASSWORD= and IFEXISTS= settings, matched since 2f9087c/1987091 in any case)
 * by a plain {@code split(";")}, so it takes the password as {@code pa\}, hands H2 the URL with a
 * bare {@code ;ss-tail} setting, and the app's own URL fails in the CLI with "a database error
 * [SQLState 90046]" (H2's URL format error). The same escape-blind reading redacts only the part
 * of the password before the escaped {@code ;} in the URL a message echoes ({@code PASSWORD_SETTING}
 * stops at the first {@code ;}), so the rest of the password would be printed by "no journal at
 * URL" and the other messages that name the URL.
 *
 * <p>Review of 2026-12-05 (sess23).
 */
class H2UrlEscapedSeparatorTest {
  @TempDir
  Path dir;

  @Test
  void anH2UrlWithAnEscapedSemicolonInThePasswordOpensTheJournalAndNeverShowsThePassword() throws Exception {
    String base = "jdbc:h2:file:" + dir.resolve("app");
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL(base);
    ds.setUser("sa");
    ds.setPassword("pa;ss-tail");
    try (JdbcJournal app = JdbcJournal.dataSource(ds).closeOnShutdown(false).open()) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
      app.begin(new NewOperation(new OperationId("t", "create-order", IdempotencyKey.of("k-1")), null,
          Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
    }
    // The same credentials as H2 reads them from a URL: what the app's URL says.
    String appsUrl = base + ";USER=sa;PASSWORD=pa\\;ss-tail";
    try (var c = java.sql.DriverManager.getConnection(appsUrl)) {
      assertEquals("SA", c.getMetaData().getUserName(), "H2 itself opens the app's URL");
    }

    CliRun stats = CliRun.of("journal", "stats", "--jdbc-url", appsUrl);

    assertAll(
        () -> assertEquals(0, stats.code(), "the app's H2 URL was refused: " + stats.err()),
        () -> assertTrue(stats.out().contains("PENDING    1"), stats.out()),
        () -> assertFalse((stats.out() + stats.err()).contains("ss-tail"), "the password was printed: " + stats.err()));
  }

  @Test
  void aRedactedUrlHidesAPasswordWithAnEscapedSemicolon() {
    String shown = JournalOptions.redacted("jdbc:h2:file:/var/app/db;USER=sa;PASSWORD=pa\\;ss-tail;MODE=PostgreSQL");

    assertFalse(shown.contains("ss-tail"), "the rest of the password is shown: " + shown);
  }
}
