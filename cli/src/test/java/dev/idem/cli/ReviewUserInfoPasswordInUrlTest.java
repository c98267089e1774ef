package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * A PostgreSQL URL with its credentials in the user-info part, {@code jdbc:postgresql://idem:pw@db/app}:
 * what an operator gets by putting {@code jdbc:} before the app's {@code DATABASE_URL}
 * ({@code postgres://user:password@host/db}, the form Heroku, Render, Fly and libpq give). pgjdbc
 * cannot read it (it takes {@code pw@db} for the port), and the CLI's own message then quotes the URL
 * "redacted", password in clear: {@link JournalOptions#redacted} only knows {@code ;PASSWORD=} and
 * {@code ?password=}. docs/cli.md: "A message that shows the URL never shows a password in it". The
 * same URL given twice (a usage error) leaks it through picocli's message too.
 *
 * <p>Found by a review on 2026-12-06.
 */
class ReviewUserInfoPasswordInUrlTest {
  @Test
  void aPasswordInTheUrlsUserInfoIsNotPrinted() {
    String url = "jdbc:postgresql://idem:pg-s3cret@db.internal:5432/app";
    CliRun once = CliRun.of("journal", "stats", "--jdbc-url", url);
    CliRun twice = CliRun.of("journal", "stats", "--jdbc-url", url, "--jdbc-url", url);

    assertAll(
        () -> assertEquals(1, once.code(), once.err()),
        () -> assertFalse(once.err().contains("pg-s3cret"), "the password is printed: " + once.err()),
        () -> assertEquals(2, twice.code(), twice.err()),
        () -> assertFalse(twice.err().contains("pg-s3cret"), "the password is printed: " + twice.err()));
  }

  @Test
  void redactedHidesAUserInfoPassword() {
    assertFalse(JournalOptions.redacted("jdbc:postgresql://idem:pg-s3cret@db/app").contains("pg-s3cret"));
  }
}
