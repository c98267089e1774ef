package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which writes of the embedded journal are committed (and so, with the sync of the {@code -wal} file,
 * durable) when they return, seen the way another process would: through a read-only journal on the
 * same files, which reads only committed transactions. The writer defers its other commits for an
 * hour, so that nothing is committed by a timer.
 */
class EmbeddedJournalDurabilityTest {
  private static final Duration LEASE = Duration.ofMinutes(1);

  @TempDir
  Path tmp;
  private final Ops ops = new Ops(2024);

  private JdbcJournal writer() throws Exception {
    return JdbcJournal.embedded(tmp.resolve("journal")).deferredCommitInterval(Duration.ofHours(1)).open();
  }

  private OperationState committedState(NewOperation op) throws Exception {
    return committedState(op.id());
  }

  private OperationState committedState(OperationId id) throws Exception {
    try (JdbcJournal reader = JdbcJournal.openReadOnly(tmp.resolve("journal"))) {
      return reader.find(id).orElseThrow().state();
    }
  }

  /** What the caller is told is what the journal keeps: FAILED and UNCERTAIN before the call returns. */
  @Test
  void failedAndUncertainAreCommittedBeforeTheTransitionReturnsAndSucceededMayWait() throws Exception {
    NewOperation failed = ops.newOp("{\"f\":1}");
    NewOperation uncertain = ops.newOp("{\"u\":1}");
    NewOperation succeeded = ops.newOp("{\"s\":1}");
    try (JdbcJournal j = writer()) {
      for (NewOperation op : new NewOperation[] {succeeded, failed, uncertain}) {
        j.begin(op);
      }
      Lease s = j.claim(succeeded.id(), "n", T0, LEASE).orElseThrow();
      j.transition(succeeded.id(), s, Transition.finish(OperationState.SUCCEEDED, T0, Ops.ok("{}"), null));
      assertEquals(OperationState.PENDING, committedState(succeeded), "SUCCEEDED stays deferred (it may)");

      Lease f = j.claim(failed.id(), "n", T0, LEASE).orElseThrow();
      j.transition(failed.id(), f, Transition.finish(OperationState.FAILED, T0, null, "HTTP 400"));
      assertEquals(OperationState.FAILED, committedState(failed));

      Lease u = j.claim(uncertain.id(), "n", T0, LEASE).orElseThrow();
      j.transition(uncertain.id(), u, Transition.finish(OperationState.UNCERTAIN, T0, null, "read timeout"));
      assertEquals(OperationState.UNCERTAIN, committedState(uncertain));
    }
  }

  /**
   * A queued operation may wait long before its dispatch; its first claim is committed before the
   * attempt may leave, so that one found unclaimed after a crash is known never to have been sent.
   * An inline operation's first claim rides on its begin's commit.
   */
  @Test
  void theFirstClaimOfAQueuedOperationIsCommittedBeforeItReturnsAndAnInlineOnesMayWait() throws Exception {
    NewOperation inline = ops.newOp("{\"i\":1}");
    Operation queued = Operation.builder("create-order", Ops.request("{\"q\":1}")).build();
    try (JdbcJournal j = writer()) {
      j.begin(inline);
      IdempotentExecutor.builder().journal(j).build().enqueue(queued);
      j.claim(inline.id(), "n", T0, LEASE).orElseThrow();
      assertEquals(OperationState.PENDING, committedState(inline), "an inline first claim stays deferred");
      j.claim(queued.id(), "n", T0, LEASE).orElseThrow();
      assertEquals(OperationState.IN_FLIGHT, committedState(queued.id()));
    }
  }
}
