package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyException;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A journal (here the app's {@link ForwardingJournal} decorator, say one over a connection pool
 * that throws an unchecked "pool exhausted" once) throws a RuntimeException while the executor
 * writes an ambiguous attempt (a read timeout) with its retry. AttemptLoop's safety net for the
 * app's code catches it as if the classifier had thrown, and writes PENDING with a second, plain
 * transition, which the journal now takes: the ambiguous attempt it had handed the journal is gone
 * from the history. Before the net, the operation stayed IN_FLIGHT and the next claim owed an
 * ambiguous attempt for it (Takeover), so a later refusal ended UNCERTAIN; now the history hides
 * the possible effect, and a 400 on the next execution ends FAILED.
 */
class SafetyNetJournalRuntimeExceptionTest {

  /** Throws once, before writing anything, when asked to record an attempt. */
  static final class FlakyOnce extends ForwardingJournal {
    final AtomicInteger failuresLeft = new AtomicInteger(1);

    FlakyOnce() {
      super(new InMemoryJournal());
    }

    @Override
    public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
      if (failuresLeft.getAndDecrement() > 0) {
        throw new IllegalStateException("connection pool exhausted");
      }
      super.recordAttempt(id, lease, attempt);
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aJournalRuntimeExceptionDoesNotEraseAnAmbiguousAttempt(Driver d) throws IdempotencyException {
    Harness h = new Harness(new FlakyOnce(), Harness.POLICY, b -> {});
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op).then(ScriptedTransport.fail(new SocketTimeoutException("Read timed out")))
        .otherwise(status(400));

    assertThrows(RuntimeException.class, () -> {
      try {
        d.run(h, op, t);
      } catch (IdempotencyException e) {
        throw new RuntimeException(e);
      }
    });
    assertEquals(1, t.count());

    // The app runs the operation again later (or a resume does): the server refuses it.
    h.time.advance(Duration.ofMinutes(10));
    assertThrows(IdempotencyException.class, () -> d.run(h, op, t));

    OperationRecord r = h.record(op);
    assertEquals(2, t.count());
    assertEquals(OperationState.UNCERTAIN, r.state(), "attempt 1 was written to the server and its response lost"
        + " (read timeout), so a 400 on attempt 2 cannot prove the effect absent; yet the operation ended "
        + r.state() + " (" + r.reason() + ") with attempts " + r.attempts());
  }
}
