package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Takeover;
import dev.idem.core.support.FakeHost;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The takeover rule lives in the executor, not in each journal: the journal only reports that a
 * claim took an IN_FLIGHT operation over, and the executor records the attempt the dead holder may
 * have sent, so that a permanent answer to the resend ends UNCERTAIN, never FAILED (guarantee 4).
 */
class TakeoverRuleTest {
  private static final Duration LEASE = Duration.ofSeconds(30);
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  /** The resend is refused with a permanent 400, as a server that lost the first request would. */
  private final FakeHost host = new FakeHost(time, FakeHost.always(400));

  private IdempotentExecutor executor(String owner) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).random(() -> 0.5).owner(owner).leaseFor(LEASE).build();
  }

  /** node-a claimed the operation and died: its attempt may be on the wire, and nothing recorded it. */
  private Operation heldByADeadProcess() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    executor("node-a").enqueue(op);
    Lease dead = journal.claim(op.id(), "node-a", time.now(), LEASE).orElseThrow();
    assertEquals(1, dead.generation());
    return op;
  }

  @Test
  void aResendAfterATakeoverThatGetsAPermanentAnswerEndsUncertain() throws Exception {
    Operation op = heldByADeadProcess();
    time.advance(LEASE.plusSeconds(1));

    assertThrows(OperationUncertainException.class, () -> executor("node-b").execute(op, host));

    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(OperationState.UNCERTAIN, r.state());
    assertEquals(2, r.attempts().size(), "the dead holder's attempt, then the resend: " + r.attempts());
    AttemptRecord owed = r.attempts().get(0);
    assertEquals(Classification.AMBIGUOUS, owed.classification());
    assertEquals(1, owed.generation(), "counted for the dead holder's generation");
    assertEquals(Takeover.REASON, owed.reason());
    assertEquals(1, host.attempts(op.key()), "one resend, with the same key");
  }

  @Test
  void aRestartedInstanceReclaimingItsOwnLiveLeaseCountsTheSameAttempt() throws Exception {
    Operation op = heldByADeadProcess();
    time.advance(Duration.ofSeconds(5)); // restarted under the same name, its old lease still live

    assertThrows(OperationUncertainException.class, () -> executor("node-a").execute(op, host));

    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertTrue(r.attempts().get(0).isAmbiguous(), r.attempts().toString());
    assertEquals(1, host.attempts(op.key()));
  }

  @Test
  void aClaimOfAPendingOperationOwesNothing() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    executor("node-a").enqueue(op);

    assertThrows(OperationFailedException.class, () -> executor("node-b").execute(op, host));

    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(OperationState.FAILED, r.state(), "never sent before: a 400 is a clean failure");
    assertEquals(1, r.attempts().size());
  }

  @Test
  void theOwedAttemptIsNotRecordedTwice() {
    AttemptRecord first = Takeover.owedAttempt(java.util.List.of(), 3, time.now()).orElseThrow();
    assertEquals(1, first.number());
    assertEquals(Optional.empty(), Takeover.owedAttempt(java.util.List.of(first), 3, time.now()));
  }
}
