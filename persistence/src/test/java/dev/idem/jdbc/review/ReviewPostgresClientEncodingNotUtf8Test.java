package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.JournalException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import dev.idem.jdbc.support.WrappingDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Review (round2pg), b890ae08: the open refuses a database whose server_encoding is not UTF8, and
 * reads nothing else. The encoding the text travels in is the connection's client_encoding: a
 * DataSource whose connections use another one (pgjdbc's allowEncodingChanges=true with a pool's
 * init SQL {@code SET client_encoding TO 'LATIN1'}) is opened on a UTF8 database without a word,
 * and a reason holding non-ASCII characters ("5 €", an en dash, "ü") is stored as mojibake
 * ("5 â¬", "Ã¼"): no error, the outcome's text silently changed.
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresClientEncodingNotUtf8Test {
  @Test
  void aConnectionWhoseClientEncodingIsNotUtf8IsRefusedAtOpenOrItsTextKeptExactly(PgDatabase db) throws Exception {
    PGSimpleDataSource pg = db.dataSource();
    pg.setAllowEncodingChanges(true);
    // A pool's connection init SQL (HikariCP's connectionInitSql, say): every connection it hands out.
    DataSource ds = new WrappingDataSource(pg) {
      @Override
      protected Connection wrap(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
          st.execute("SET client_encoding TO 'LATIN1'");
        }
        return c;
      }
    };
    JdbcJournal j;
    try {
      j = JdbcJournal.dataSource(ds).open();
    } catch (JournalException refused) {
      // refused at open, before anything was sent, naming the setting and its value
      assertTrue(refused.getMessage().contains("client_encoding LATIN1"), refused.getMessage());
      return;
    }
    try (JdbcJournal journal = j) {
      OperationId id = new OperationId("tenant-a", "charge", IdempotencyKey.of("order-client-enc-1"));
      journal.begin(Ops.op(id, "{\"amount\":5}"));
      Lease lease = journal.claim(id, "pod-a", Ops.T0, Duration.ofSeconds(30)).orElseThrow();
      String reason = "HTTP 402: Karte gesperrt \u2013 Limit 5 \u20ac \u00fcberschritten";
      journal.transition(id, lease, Transition.finish(OperationState.FAILED, Ops.T0.plusSeconds(1), null, reason));
      var r = journal.find(id).orElseThrow();
      assertEquals(OperationState.FAILED, r.state());
      assertEquals(reason, r.reason(), "the reason was changed silently on its way into the journal");
    }
  }
}
