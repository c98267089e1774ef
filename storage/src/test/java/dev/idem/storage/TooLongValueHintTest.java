package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * Issue 26: every store's too-long-value error carried the journal's column hint ("owners, scopes,
 * operation names and references hold at most 200 characters"), so an inbox whose event id was too
 * long was told about operation names. The hint now names the failing store's columns, or nothing
 * for a store without length limits (the guard's columns are TEXT). PostgreSQL names the length, not
 * the column: the hint names the store's columns of that length (a webhook processor's owner over
 * 128 characters was reported as a source, event id or type too long).
 */
class TooLongValueHintTest {
  /** PostgreSQL's message for a VARCHAR overflow: it names the type's limit, never the column. */
  private static SQLException postgresTooLong(int limit) {
    return new SQLException("ERROR: value too long for type character varying(" + limit + ")", "22001");
  }

  @Test
  void theInboxHintNamesTheInboxsColumnsNotTheJournals() {
    String said = StoreErrors.diagnose("webhook inbox", postgresTooLong(255));

    assertEquals("a value is too long for the webhook inbox's column event_id or event_type (at most 255 characters)",
        said);
  }

  @Test
  void postgresLimitNamesTheInboxColumnsOfThatLengthSuchAsTheProcessorsOwner() {
    // A WebhookProcessor owner over 128 characters: the hint blamed sources, event ids and types.
    String said = StoreErrors.diagnose("webhook inbox", postgresTooLong(128));

    assertTrue(said.contains("lease_owner") && said.contains("128"), said);
    assertFalse(said.contains("sources hold"), said);
  }

  @Test
  void withoutALimitTheInboxSummaryNamesEveryLimitedColumn() {
    String said = StoreErrors.diagnose("webhook inbox",
        new SQLException("ERROR: value too long for some type", "22001"));

    assertTrue(said.contains("sources hold at most 64 characters, event ids and event types 255"), said);
    assertTrue(said.contains("processor owners 128"), said);
  }

  @Test
  void aColumnTheDriverNamesIsGivenWithItsLimit() {
    String said = StoreErrors.diagnose("webhook inbox",
        new SQLException("Value too long for column \"SOURCE CHARACTER VARYING(64)\": \"...\"", "22001"));

    assertEquals("a value is too long for the webhook inbox's column source (at most 64 characters)", said);
  }

  @Test
  void aLengthNoColumnHasFallsBackToTheSummary() {
    String said = StoreErrors.diagnose("journal", postgresTooLong(12));

    assertTrue(said.contains("owners, scopes, operation names and references hold at most 200 characters"), said);
  }

  @Test
  void theGuardGetsNoColumnHint() {
    String said = StoreErrors.diagnose("idempotency store", postgresTooLong(100));

    assertEquals("a value is too long for the idempotency store's column", said);
  }

  @Test
  void theJournalKeepsItsHintForEitherDriverWording() {
    String postgres = StoreErrors.diagnose("journal", postgresTooLong(200));
    String sqlite = StoreErrors.diagnose("journal", new SQLException(
        "[SQLITE_CONSTRAINT_CHECK] A CHECK constraint failed (CHECK constraint failed: op_key_length)", null, 275));

    assertEquals("a value is too long for the journal's column operation or owner or reference or scope (at most"
        + " 200 characters)", postgres);
    assertEquals("a value is too long for the journal's column op_key (at most 255 characters)", sqlite);
  }
}
