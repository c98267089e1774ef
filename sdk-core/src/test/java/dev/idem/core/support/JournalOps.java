package dev.idem.core.support;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * Operations driven straight through a journal, for the tests of what a journal keeps and drops:
 * {@code tenant/create-order/<key>}, begun, claimed by {@code p1} and finished at {@link #T0}.
 */
public final class JournalOps {
  /** When every operation here begins and ends. */
  public static final Instant T0 = Instant.parse("2026-11-02T10:00:00Z");

  private JournalOps() {
  }

  /** A new operation for {@code key}, queued or not. */
  public static NewOperation op(String key, boolean queued) {
    RequestSnapshot req = Requests.order("{\"k\":\"" + key + "\"}");
    return new NewOperation(new OperationId("tenant", "create-order", IdempotencyKey.of(key)), null,
        Fingerprinter.defaults().fingerprint(req), req, T0, queued);
  }

  /** The identity of {@code key}'s operation. */
  public static OperationId id(String key) {
    return op(key, false).id();
  }

  /**
   * The attempt that ended an operation in {@code end}: a 201 for SUCCEEDED, a timeout (ambiguous)
   * otherwise.
   */
  public static AttemptRecord attempt(int number, Lease lease, OperationState end) {
    return end == OperationState.SUCCEEDED
        ? new AttemptRecord(number, lease.generation(), T0, T0, Classification.SUCCESS, 201, null, "HTTP 201",
            Duration.ZERO, "test")
        : new AttemptRecord(number, lease.generation(), T0, T0, Classification.AMBIGUOUS, null, null, "timeout",
            Duration.ZERO, "test");
  }

  /**
   * Begins and claims {@code key}'s operation, not queued, and finishes it in {@code end} with a
   * 201 response.
   *
   * @return its record, or null if the journal dropped it at once
   */
  public static OperationRecord finish(Journal journal, String key, OperationState end) throws IdempotencyException {
    BeginResult begun = journal.beginAndClaim(op(key, false), "p1", Duration.ofMinutes(1));
    journal.recordAttemptAndTransition(begun.record().id(), begun.lease(), attempt(1, begun.lease(), end),
        Transition.finish(end, T0, ScriptedTransport.response(201, Map.of(), "{}"), null));
    return journal.find(begun.record().id()).orElse(null);
  }

  /** Re-drives a finished operation and finishes it again, in {@code end}, with attempt {@code number}. */
  public static void refinish(Journal journal, String key, int number, OperationState end)
      throws IdempotencyException {
    journal.redrive(id(key), T0);
    Lease lease = journal.claim(id(key), "p1", T0, Duration.ofMinutes(1)).orElseThrow();
    journal.recordAttemptAndTransition(id(key), lease, attempt(number, lease, end),
        Transition.finish(end, T0, ScriptedTransport.response(201, Map.of(), "{}"), null));
  }

  /**
   * Queues {@code op} through an executor named {@code owner} and ends it SUCCEEDED (a 201) at
   * {@code time}'s now, no delivery recorded: an outcome still owed to a handler, as a crash between
   * an outbox delivery's ending and its receipt leaves it.
   */
  public static void endedOwed(Journal journal, VirtualTime time, String owner, Operation op)
      throws IdempotencyException {
    IdempotentExecutor.builder().journal(journal).owner(owner).clock(time.clock()).build().enqueue(op);
    Lease lease = journal.claim(op.id(), owner, time.now(), Duration.ofMinutes(2)).orElseThrow();
    journal.transition(op.id(), lease, Transition.finish(OperationState.SUCCEEDED, time.now(),
        FakeHost.response(201, Map.of()), "201"));
  }

  /** An executor named {@code owner} on {@code journal}, its time {@code time}'s. */
  public static IdempotentExecutor executor(Journal journal, VirtualTime time, String owner) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5).build();
  }
}
