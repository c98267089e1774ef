package dev.idem.jdbc.review;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.Transport;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.CommitReplyLost;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The connection to PostgreSQL drops while the COMMIT of a begin is answered: the server committed
 * the row, the driver throws an 08006 ("An I/O error occurred while sending to the backend"). The
 * executor used to tell the caller "nothing was sent: an operation with no durable record is never
 * sent", yet the record was durable (IN_FLIGHT, claimed under this instance's name) and another
 * instance sent it. A caller who believed the message and retried under a new key got two effects.
 * Now the journal reads the row again on a fresh connection and the call goes on with it.
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresInDoubtBeginCommitTest {
  private final Ops ops = new Ops(4242);
  private final VirtualTime time = new VirtualTime(T0);
  private final List<IdempotencyKey> sent = new CopyOnWriteArrayList<>();
  private final Transport server = (request, key) -> {
    sent.add(key);
    return Ops.ok("{\"id\":1}");
  };

  @Test
  void aBeginWhoseCommitReplyIsLostGoesOnWithTheRowItFindsAndSendsOnceWithItsKey(PgDatabase db) throws Exception {
    CommitReplyLost flaky = new CommitReplyLost(db.dataSource()); // commits for real, then throws 08006
    try (JdbcJournal journalA = JdbcJournal.dataSource(flaky).open();
        JdbcJournal journalB = JdbcJournal.dataSource(db.dataSource()).open()) {
      IdempotentExecutor a = executor(journalA, "instance-a");
      IdempotentExecutor b = executor(journalB, "instance-b");
      IdempotencyKey key = ops.key();
      Operation op = Operation.builder("create-order", Ops.request("{\"amount\":100}")).key(key).build();

      flaky.armed.set(true);
      // The begin's commit is not confirmed; the row is read again, found, and the call goes on
      // with it (as for an existing operation), rather than telling the caller nothing was sent.
      a.execute(op, server);
      assertFalse(flaky.armed.get(), "the begin's commit reply was dropped");
      assertEquals(List.of(key), sent);

      OperationId id = new OperationId(op.id().scope(), op.id().operation(), key);
      Optional<OperationRecord> record = journalB.find(id);
      assertEquals(OperationState.SUCCEEDED, record.orElseThrow().state());
      time.advance(Duration.ofMinutes(3)); // past instance-a's lease
      b.resumePending(Map.of("create-order", ResumeHandler.of(server, o -> { }, f -> { })));

      assertEquals(List.of(key), sent, "one send, by the caller, with its key; none by instance-b's resume");
    }
  }

  private IdempotentExecutor executor(JdbcJournal journal, String owner) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5).build();
  }
}
