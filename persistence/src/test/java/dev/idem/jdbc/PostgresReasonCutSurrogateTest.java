package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
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

/** {@link ReasonCutSurrogateTest} on PostgreSQL. */
@ExtendWith(PostgresExtension.class)
class PostgresReasonCutSurrogateTest {
  @Test
  void theRecordReturnedEqualsTheRecordReadBackWhenTheCutSplitsASurrogatePair(PgDatabase db) throws Exception {
    OperationId id = new OperationId("tenant-a", "charge", IdempotencyKey.of("order-cut-pg"));
    String reason = "x".repeat(1996) + "\uD83D\uDE00" + "y".repeat(100);
    try (JdbcJournal j = JdbcJournal.dataSource(db.dataSource()).open()) {
      j.begin(Ops.op(id, "{\"amount\":5}"));
      Lease lease = j.claim(id, "node", T0, Duration.ofSeconds(30)).orElseThrow();
      OperationRecord returned;
      try {
        returned = j.transition(id, lease,
            Transition.finish(OperationState.UNCERTAIN, T0.plusSeconds(1), null, reason));
      } catch (JournalException e) {
        fail("the transition of an attempt already sent failed on the cut of its reason; the operation stays "
            + j.find(id).orElseThrow().state() + ": " + e.getMessage());
        return;
      }
      String stored = j.find(id).orElseThrow().reason();
      assertTrue(returned.reason().equals(stored), "returned U+" + Integer.toHexString(returned.reason().charAt(1996))
          + " at the cut, stored U+" + Integer.toHexString(stored.charAt(1996)));
    }
  }
}
