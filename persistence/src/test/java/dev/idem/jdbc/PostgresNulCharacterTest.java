package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.JournalException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A NUL character (U+0000) is a valid Java and JSON character, and SQLite and the in-memory journal
 * store it, but PostgreSQL's text types refuse it ("invalid byte sequence for encoding UTF8: 0x00").
 * The journal passes such text straight to the driver.
 */
@ExtendWith(PostgresExtension.class)
class PostgresNulCharacterTest {
  private static final Duration LEASE = Duration.ofSeconds(30);

  /**
   * A transition's reason is free text that reaches the journal from a classifier's verdict or a
   * transport's exception message (DefaultClassifier puts a TransportFailure's message in it), so a
   * hostile server's bytes can put a NUL there. The attempt has already gone out: the journal must
   * record the outcome, not fail the transition and leave the operation IN_FLIGHT to be resent and
   * failed again on every resume.
   */
  @Test
  void aTransitionWhoseReasonHoldsANulIsRecordedNotRefusedAfterTheAttemptWentOut(PgDatabase db) throws Exception {
    OperationId id = new OperationId("tenant-a", "charge", IdempotencyKey.of("order-nul-1"));
    try (JdbcJournal j = JdbcJournal.dataSource(db.dataSource()).open()) {
      j.begin(Ops.op(id, "{\"amount\":5}"));
      Lease lease = j.claim(id, "node", Ops.T0, LEASE).orElseThrow();
      String reason = "unexpected status line: HTTP/1.1 2\u000000 OK; the request may have been sent";
      try {
        j.transition(id, lease, Transition.finish(OperationState.UNCERTAIN, Ops.T0.plusSeconds(1), null, reason));
      } catch (JournalException e) {
        fail("the transition to UNCERTAIN of an attempt already sent failed because its reason holds a NUL"
            + " character; the operation stays " + j.find(id).orElseThrow().state() + ": " + e.getMessage());
      }
      OperationRecord r = j.find(id).orElseThrow();
      assertEquals(OperationState.UNCERTAIN, r.state());
      assertTrue(r.reason().startsWith("unexpected status line"), r.reason());
    }
  }

  /**
   * A scope, operation name or reference with a NUL cannot be stored on PostgreSQL. As with an
   * unpaired surrogate (refused at begin with an IllegalArgumentException naming the field), the
   * caller should be told its input is bad, not that the journal's database failed.
   */
  @Test
  void aBeginWithANulInTheReferenceIsRefusedAsBadInputNotAsADatabaseFailure(PgDatabase db) throws Exception {
    OperationId id = new OperationId("tenant-a", "charge", IdempotencyKey.of("order-nul-2"));
    try (JdbcJournal j = JdbcJournal.dataSource(db.dataSource()).open()) {
      Exception e = assertThrows(Exception.class, () -> j.begin(Ops.op(id, "inv-\u0000-7", "{}")));
      assertTrue(e instanceof IllegalArgumentException,
          "a reference with a NUL was reported as a journal failure (" + e.getClass().getSimpleName() + ": "
              + e.getMessage() + ")");
      assertTrue(e.getMessage().contains("reference"), e.getMessage());
    }
  }

  @Test
  void reasonsAreStoredWithAReplacementCharacterForEachNulAsOnTheOtherDatabases(PgDatabase db) throws Exception {
    try (JdbcJournal j = JdbcJournal.dataSource(db.dataSource()).open()) {
      NulCharacterTest.reasonsAreStoredWithAReplacementCharacterForEachNul(j);
    }
  }

  /**
   * Scope and operation name too, and beginAndClaim; lookups of such text answer as for an identity
   * the journal does not hold, where they failed as a database error.
   */
  @Test
  void identitiesAndReferencesWithANulAreRefusedAtBeginAndFoundNowhere(PgDatabase db) throws Exception {
    try (JdbcJournal j = JdbcJournal.dataSource(db.dataSource()).open()) {
      NulCharacterTest.identitiesAndReferencesWithANulAreRefusedAtBegin(j);
      NulCharacterTest.lookupsWithANulFindNothing(j);
    }
  }

  /** Passed before the fix: request_json holds the NUL as a JSON escape, which PostgreSQL stores. */
  @Test
  void aRequestHeaderWithANulIsStoredAsGiven(PgDatabase db) throws Exception {
    try (JdbcJournal j = JdbcJournal.dataSource(db.dataSource()).open()) {
      NulCharacterTest.aRequestHeaderWithANulIsStoredAsGiven(j);
    }
  }
}
