package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** What of a JDBC URL a store's name keeps: everything but the credentials. */
class JdbcUrlsTest {
  @Test
  void queryPasswordsAreRedactedTheRestKept() {
    assertEquals("jdbc:postgresql://db:5432/app?user=app&password=redacted&ssl=true",
        JdbcUrls.shown("jdbc:postgresql://db:5432/app?user=app&password=s3cret&ssl=true"));
    assertEquals("jdbc:postgresql://db/app?sslpassword=redacted",
        JdbcUrls.shown("jdbc:postgresql://db/app?sslpassword=s3cret"));
  }

  @Test
  void userInfoIsRedacted() {
    String shown = JdbcUrls.shown("jdbc:postgresql://app:s3cret@db:5432/app");
    assertEquals(false, shown.contains("s3cret"), shown);
  }

  @Test
  void semicolonSettingsNamedSecretAreRedacted() {
    assertEquals("jdbc:sqlserver://db:1433;databaseName=app;user=app;password=redacted",
        JdbcUrls.shown("jdbc:sqlserver://db:1433;databaseName=app;user=app;password=s3cret"));
    assertEquals("jdbc:h2:file:/tmp/j;USER=sa;PASSWORD=redacted;MODE=PostgreSQL",
        JdbcUrls.shown("jdbc:h2:file:/tmp/j;USER=sa;PASSWORD=s3cret;MODE=PostgreSQL"));
  }

  @Test
  void aUrlWithoutCredentialsIsKeptAsWritten() {
    assertEquals("jdbc:sqlite:/var/lib/app/journal.db", JdbcUrls.shown("jdbc:sqlite:/var/lib/app/journal.db"));
    assertEquals("jdbc:postgresql://db/app?user=app", JdbcUrls.shown("jdbc:postgresql://db/app?user=app"));
    assertNull(JdbcUrls.shown(null));
  }
}
