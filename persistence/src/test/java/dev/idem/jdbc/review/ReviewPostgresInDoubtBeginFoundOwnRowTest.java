package dev.idem.jdbc.review;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationFailedException;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.CommitReplyLost;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The connection drops while PostgreSQL answers a begin's COMMIT; the row was committed, and the
 * journal's re-read finds it: IN_FLIGHT under this very call's claim (this owner, generation 1, no
 * attempt, the lease it wrote). Nothing can have been sent under that claim, yet the begin returns
 * it as an operation it did not create, so the executor takes over its own claim and records a
 * made-up AMBIGUOUS attempt #1. Consequences for an ordinary call:
 *
 * <ul>
 *   <li>The target's one and only answer is a definitive 400: the operation ends UNCERTAIN ("after
 *       an earlier ambiguous or successful attempt, which may have taken effect") and the caller gets
 *       OperationUncertainException, told to reconcile a request that provably never took effect,
 *       instead of OperationFailedException.</li>
 *   <li>The listener never hears OperationStarted for the operation this call journaled, yet hears
 *       AttemptStarted #2 and Failed/Uncertain/Succeeded for it.</li>
 * </ul>
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresInDoubtBeginFoundOwnRowTest {
  private final Ops ops = new Ops(6161);
  private final VirtualTime time = new VirtualTime(T0);
  private final List<IdempotencyKey> sent = new CopyOnWriteArrayList<>();
  private final List<IdemEvent> events = new CopyOnWriteArrayList<>();

  @Test
  void aDefinitiveRejectionOfTheOnlySendEndsFailedNotUncertain(PgDatabase db) throws Exception {
    Transport rejecting = (request, key) -> {
      sent.add(key);
      return new ResponseSnapshot(400, Map.of("Content-Type", List.of("application/json")),
          "{\"error\":\"invalid card number\"}".getBytes(StandardCharsets.UTF_8));
    };
    CommitReplyLost flaky = new CommitReplyLost(db.dataSource()); // commits for real, then throws 08006
    try (JdbcJournal journal = JdbcJournal.dataSource(flaky).open()) {
      Operation op = Operation.builder("create-order", Ops.request("{\"amount\":100}")).key(ops.key()).build();
      flaky.armed.set(true);
      IdempotencyException e = assertThrows(IdempotencyException.class,
          () -> executor(journal).execute(op, rejecting));
      assertEquals(List.of(op.id().key()), sent, "sent once");
      assertTrue(e instanceof OperationFailedException, "the only send was rejected with a 400, and nothing was"
          + " sent under the begin's own claim: expected FAILED, got " + e);
    }
  }

  @Test
  void theListenerHearsOperationStartedForTheOperationThisCallJournaled(PgDatabase db) throws Exception {
    Transport server = (request, key) -> {
      sent.add(key);
      return Ops.ok("{\"id\":1}");
    };
    CommitReplyLost flaky = new CommitReplyLost(db.dataSource());
    try (JdbcJournal journal = JdbcJournal.dataSource(flaky).open()) {
      Operation op = Operation.builder("create-order", Ops.request("{\"amount\":100}")).key(ops.key()).build();
      flaky.armed.set(true);
      executor(journal).execute(op, server);
      assertEquals(List.of(op.id().key()), sent);
      List<String> heard = events.stream().map(ev -> ev.getClass().getSimpleName()
          + (ev instanceof IdemEvent.AttemptStarted a ? "#" + a.number() : "")
          + (ev instanceof IdemEvent.Succeeded s ? "(attempts=" + s.attempts() + ")" : "")).toList();
      assertEquals(List.of("OperationStarted", "AttemptStarted#1", "AttemptFinished", "Succeeded(attempts=1)"),
          heard);
    }
  }

  private IdempotentExecutor executor(JdbcJournal journal) {
    return IdempotentExecutor.builder().journal(journal).owner("instance-a").clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5).listener(events::add).build();
  }
}
