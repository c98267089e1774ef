package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.Operation;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * docs/client.md ("Your code that throws mid-call"): an Error from a listener falls to the safety
 * net, and "the attempt that was sent is recorded (judged by the default table, a 2xx ... as
 * AMBIGUOUS)". A listener that throws an Error on the AttemptFinished of a 201 gets the net, but
 * the attempt AttemptLoop.record already held (unjournaled) is written as it was: SUCCESS, decision
 * "success", beside an operation the same write puts back to PENDING. The journal then says the
 * attempt succeeded while the operation is not.
 */
class SafetyNetListenerErrorOnSuccessTest {

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aListenerErrorBeforeTheSuccessIsWrittenRecordsThe201AsAmbiguous(Driver d) throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.listener(e -> {
      if (e instanceof IdemEvent.AttemptFinished f && f.attempt().classification() == Classification.SUCCESS) {
        throw new AssertionError("listener invariant broken");
      }
    }));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op).then(status(201));

    Throwable told = assertThrows(Throwable.class, () -> d.run(h, op, t));
    if (told instanceof CompletionException && told.getCause() != null) {
      told = told.getCause();
    }

    assertEquals(1, t.count());
    assertInstanceOf(OperationPendingException.class, told, "the net's documented answer");
    OperationRecord r = h.record(op);
    assertEquals(OperationState.PENDING, r.state());
    AttemptRecord a = r.attempts().get(0);
    assertEquals(Classification.AMBIGUOUS, a.classification(), "the 201 not accepted as a success must be recorded"
        + " AMBIGUOUS beside a PENDING operation, as docs/client.md says; journal holds: " + a);
  }
}
