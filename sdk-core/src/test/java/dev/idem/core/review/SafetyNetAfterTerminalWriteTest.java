package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotencyException;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The app's journal decorator writes the transition, then its own hook (an audit event, a cache
 * eviction) throws a RuntimeException: the 201 is SUCCEEDED in the journal. AttemptLoop's safety
 * net for the app's code runs after that terminal write (the loop still holds its lease until the
 * write returns), its own PENDING write is refused (suppressed), and the caller is told
 * OperationPendingException: "is PENDING ... sent again with its key when due, by an
 * OutboxDispatcher, resumePending, or executing the same Operation again". The journal says
 * SUCCEEDED; nothing will be sent again; a caller that waits for the dispatcher waits forever.
 */
class SafetyNetAfterTerminalWriteTest {

  static final class ThrowsAfterWriting extends ForwardingJournal {
    ThrowsAfterWriting() {
      super(new InMemoryJournal());
    }

    @Override
    public OperationRecord transition(OperationId id, Lease lease, Transition t) throws IdempotencyException {
      OperationRecord written = super.transition(id, lease, t);
      if (t.target().isTerminal()) {
        throw new IllegalStateException("audit hook failed after the write");
      }
      return written;
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void theCallerIsNotToldPendingForAnOperationTheJournalHoldsSucceeded(Driver d) throws IdempotencyException {
    Harness h = new Harness(new ThrowsAfterWriting(), Harness.POLICY, b -> {});
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op).then(status(201));

    Throwable thrown = assertThrows(Throwable.class, () -> d.run(h, op, t));

    OperationRecord r = h.record(op);
    assertEquals(OperationState.SUCCEEDED, r.state(), r.reason());
    assertEquals(1, t.count());
    Throwable told = thrown instanceof java.util.concurrent.CompletionException && thrown.getCause() != null
        ? thrown.getCause() : thrown;
    assertEquals(false, told instanceof OperationPendingException, "the journal holds SUCCEEDED (the 201 was"
        + " written) but the caller is told the operation is PENDING and will be sent again: " + told);
  }
}
