package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.JournalException;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Register's Javadoc (703bdb8): "An outcome the journal still owes (a queued operation that ended,
 * but whose callback a crash prevented or whose receipt was not recorded) is handed to them too
 * ... so a callback may see an outcome twice, never zero times".
 *
 * <p>Here the dispatcher's own delivery gets a 201 and the journal commits SUCCEEDED, but the
 * commit is reported as failed (a connection dropped after COMMIT): the delivery ends without a
 * verdict, so the callbacks are not told, and the outcome stays owed. The submit left a handle:
 * the poll's sweep, which runs before OwedOutcomes, finds the operation SUCCEEDED, completes the
 * handle and records the outcome as received; OwedOutcomes then finds nothing owed. Without the
 * handle (an operation journaled before a restart) the same outcome reaches the callbacks.
 */
class OutboxSweepConsumesOwedOutcomeTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal inner = new InMemoryJournal();
  private volatile boolean dropAfterCommit = true;
  private final ForwardingJournal journal = new ForwardingJournal(inner) {
    @Override
    public OperationRecord transition(OperationId id, Lease lease, Transition t) throws IdempotencyException {
      OperationRecord r = super.transition(id, lease, t);
      if (t.target().isTerminal() && dropAfterCommit) {
        dropAfterCommit = false;
        throw new JournalException("connection reset after COMMIT", null);
      }
      return r;
    }
  };
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  @Test
  void anOwedOutcomeOfASubmittedOperationReachesTheCallbacks() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .leaseFor(Duration.ofMinutes(2)).build();
    List<String> told = Collections.synchronizedList(new ArrayList<>());
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host, (Outcome o) -> told.add("onSuccess " + o.key()),
            e -> told.add("onFailure " + e)).build().start();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    CompletableFuture<Outcome> handle = outbox.submit(op);

    time.advance(Duration.ofMinutes(10));  // delivered, then well past the lease

    assertEquals(OperationState.SUCCEEDED, inner.find(op.id()).orElseThrow().state());
    assertEquals(1, host.attempts(op.key()));
    assertTrue(handle.isDone(), "the handle settled");
    assertEquals(1, told.size(), "the outcome of an operation this dispatcher delivered was owed to its callbacks,"
        + " but the sweep completed the submit's handle and recorded it as received first: callbacks told " + told
        + ", outcomeUndelivered=" + inner.find(op.id()).orElseThrow().outcomeUndelivered());
    outbox.close();
  }

}
