package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link JournalOptions#redacted} on each form a password takes in a JDBC URL, alone and inside a
 * message (picocli quotes a URL given twice as {@code {--jdbc-url=URL} and ...={--jdbc-url=URL}}):
 * the password is never shown, and what follows it in the message still is.
 */
class RedactedUrlTest {
  @Test
  void aUserInfoPasswordIsBlanked() {
    assertEquals("jdbc:postgresql://idem:***@db.internal:5432/app",
        JournalOptions.redacted("jdbc:postgresql://idem:pg-s3cret@db.internal:5432/app"));
  }

  @Test
  void aUserInfoPasswordRunsToTheLastAtBeforeTheHost() {
    assertAll(
        () -> assertEquals("jdbc:postgresql://idem:***@db/app", JournalOptions.redacted("jdbc:postgresql://idem:p@ss@w0rd@db/app")),
        () -> assertEquals("jdbc:postgresql://idem:***@db/app", JournalOptions.redacted("jdbc:postgresql://idem:pa/ss@db/app")),
        () -> assertEquals("jdbc:postgresql://idem:***@db/app?sslmode=require",
            JournalOptions.redacted("jdbc:postgresql://idem:pa/s@s@db/app?sslmode=require")),
        // Azure's user@server user names.
        () -> assertEquals("jdbc:postgresql://admin@srv:***@srv.postgres.example/app",
            JournalOptions.redacted("jdbc:postgresql://admin@srv:az-s3cret@srv.postgres.example/app")));
  }

  @Test
  void aUrlWithoutAPasswordIsShownAsGiven() {
    for (String url : new String[] {"jdbc:postgresql://idem@db:5432/app", "jdbc:postgresql://db:5432/app?user=me@corp.example",
        "jdbc:postgresql://h1:5432,h2:5433/app", "jdbc:sqlite:file:///var/app.db"}) {
      assertEquals(url, JournalOptions.redacted(url));
    }
  }

  @Test
  void anAtAfterThePathIsTakenForTheHostsRatherThanShowAPassword() {
    // Over-blanked: the same rule shows no part of a user-info password with a / or ; in it.
    assertEquals("jdbc:h2:tcp://localhost:***@corp", JournalOptions.redacted("jdbc:h2:tcp://localhost:9092/~/app;USER=ops@corp"));
  }

  @Test
  void aPasswordEndingInABraceOrQuoteShowsNoneOfIt() {
    assertAll(
        () -> assertEquals("jdbc:postgresql://db/app?password=***", JournalOptions.redacted("jdbc:postgresql://db/app?password=pw}")),
        () -> assertEquals("jdbc:h2:/x;PASSWORD=***", JournalOptions.redacted("jdbc:h2:/x;PASSWORD=pw'")),
        () -> assertEquals("jdbc:h2:/x;PASSWORD=***;MODE=X", JournalOptions.redacted("jdbc:h2:/x;PASSWORD=p}w';MODE=X")));
  }

  @Test
  void aQueryPasswordEndsAtItsParameter() {
    assertAll(
        () -> assertEquals("jdbc:postgresql://db/app?user=idem&password=***&sslmode=require",
            JournalOptions.redacted("jdbc:postgresql://db/app?user=idem&password=pg-s3cret&sslmode=require")),
        () -> assertEquals("jdbc:postgresql://db/app?sslpassword=***&password=***",
            JournalOptions.redacted("jdbc:postgresql://db/app?sslpassword=k3y;pw&password=a;b")));
  }

  @Test
  void anH2PasswordEndsAtItsUnescapedSemicolonOnly() {
    assertAll(
        () -> assertEquals("jdbc:h2:/var/app/db;USER=sa;PASSWORD=***;MODE=PostgreSQL",
            JournalOptions.redacted("jdbc:h2:/var/app/db;USER=sa;PASSWORD=h2-s3cret;MODE=PostgreSQL")),
        // H2 reads & and spaces as part of the value: none of it may show.
        () -> assertEquals("jdbc:h2:/var/app/db;PASSWORD=***", JournalOptions.redacted("jdbc:h2:/var/app/db;PASSWORD=a&b c}d")),
        () -> assertEquals("jdbc:h2:/var/app/db;password=***;MODE=X", JournalOptions.redacted("jdbc:h2:/var/app/db;password=pa\\;ss;MODE=X")));
  }

  @Test
  void whatFollowsARedactedPasswordInAMessageIsKept() {
    String pg = "jdbc:postgresql://db/app?password=pg-s3cret";
    String h2 = "jdbc:h2:/x;PASSWORD=h2-s3cret";
    String ui = "jdbc:postgresql://idem:ui-s3cret@db/app";
    // The message's last brace goes with a password setting before it: at the end of the text, a brace
    // may as well be the password's own last character, which must not show.
    String message = "expected only one match but got (--dir=DIR | --jdbc-url=URL)={--jdbc-url=%s} and"
        + " (--dir=DIR | --jdbc-url=URL)={--jdbc-url=%s";
    assertAll(
        () -> assertEquals(message.formatted(JournalOptions.redacted(pg), JournalOptions.redacted(h2)),
            JournalOptions.redacted(message.formatted(pg, h2) + "}")),
        () -> assertEquals(message.formatted(JournalOptions.redacted(ui), JournalOptions.redacted(pg)),
            JournalOptions.redacted(message.formatted(ui, pg) + "}")),
        () -> assertEquals(message.formatted(JournalOptions.redacted(h2), JournalOptions.redacted(ui)) + "}",
            JournalOptions.redacted(message.formatted(h2, ui) + "}")),
        () -> assertEquals("Unmatched arguments from index 2: '" + JournalOptions.redacted(pg) + "', 'x'",
            JournalOptions.redacted("Unmatched arguments from index 2: '" + pg + "', 'x'")));
  }

  @Test
  void aPostgresUrlWithUserInfoIsRefusedWithTheFormTheDriverTakes() {
    // With a port pgjdbc reads it, as the host "idem:pg-s3cret@db.internal": the password would go
    // to the name lookup, and the operator would get a bare "connection failed".
    for (String url : new String[] {"jdbc:postgresql://idem:pg-s3cret@db.internal:5432/app", "jdbc:postgresql://idem:pg-s3cret@db.internal/app"}) {
      CliRun r = CliRun.of("journal", "stats", "--jdbc-url", url);
      assertAll(
          () -> assertEquals(1, r.code(), r.err()),
          () -> assertFalse(r.err().contains("pg-s3cret"), r.err()),
          () -> assertTrue(r.err().contains("cannot read the URL jdbc:postgresql://idem:***@db.internal"), r.err()),
          () -> assertTrue(r.err().contains("?user=...&password=..."), r.err()));
    }
  }
}
