package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.JournalException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Review (pgfleet): a fleet's PostgreSQL database need not be UTF8; legacy databases are often
 * LATIN1 (ISO-8859-1). {@code JdbcJournal.dataSource(ds).open()} opens one without a word (nothing
 * checks {@code server_encoding}), and the journal then works for as long as every text it stores
 * is Latin-1. The first outcome whose reason holds a character outside it (a server's or a
 * classifier's "Karte gesperrt – 5 €": the en dash and the euro sign are not in ISO-8859-1) cannot
 * be stored: the transition of an attempt that already went out fails (SQLState 22P05, "has no
 * equivalent in encoding LATIN1"), the operation stays IN_FLIGHT, and every resume sends it again
 * and fails to record it again: the case PostgresNulCharacterTest settles for a NUL. (The NUL fix
 * itself stores U+FFFD, which LATIN1 cannot hold either.) Either the open should refuse such a
 * database, naming its encoding, or the outcome should be recorded.
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresNonUtf8DatabaseTest {
  @Test
  void anOutcomeWhoseReasonIsOutsideLatin1IsRecordedOrTheDatabaseIsRefusedAtOpen(PgDatabase db) throws Exception {
    String latin1 = db.name() + "_latin1";
    try (Connection c = db.cluster().dataSource("postgres").getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + latin1 + " ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
    }
    JdbcJournal j;
    try {
      j = JdbcJournal.dataSource(db.cluster().dataSource(latin1)).open();
    } catch (JournalException refused) {
      return; // refused at open, before anything was sent: fine if it says why
    }
    try (JdbcJournal journal = j) {
      OperationId id = new OperationId("tenant-a", "charge", IdempotencyKey.of("order-latin1-1"));
      journal.begin(Ops.op(id, "{\"amount\":5}"));
      Lease lease = journal.claim(id, "pod-a", Ops.T0, Duration.ofSeconds(30)).orElseThrow();
      // The attempt went out and the server answered 402; the outcome must be recorded.
      String reason = "HTTP 402: Karte gesperrt \u2013 Limit 5 \u20ac \u00fcberschritten";
      try {
        journal.transition(id, lease, Transition.finish(OperationState.FAILED, Ops.T0.plusSeconds(1), null, reason));
      } catch (JournalException e) {
        fail("the journal opened a LATIN1 database without a word, then could not record the FAILED outcome of an"
            + " attempt already sent (its reason holds characters outside Latin-1); the operation stays "
            + journal.find(id).orElseThrow().state() + " and is sent again by every resume: " + e.getMessage());
      }
      OperationRecord r = journal.find(id).orElseThrow();
      assertEquals(OperationState.FAILED, r.state());
    }
  }
}
