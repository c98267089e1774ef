package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * f09255ce: "An Error a transport throws ... from send ... ends the call as an interruption does:
 * ... the attempt recorded as AMBIGUOUS, the operation PENDING with its key ... execute throws the
 * Error as it is" (docs/client.md). AttemptLoop.transportThrew runs interrupted(true, e), whose
 * record() emits AttemptFinished before the PENDING write; interrupted catches only an
 * IdempotencyException or a RuntimeException. A listener that throws an Error there (the same
 * kind of Error the safety net takes for a listener anywhere else) escapes transportThrew: the
 * PENDING write never happens, the operation stays IN_FLIGHT under this executor's lease with the
 * attempt unrecorded, and execute throws the listener's Error instead of the transport's, which
 * is lost (not even suppressed).
 */
class ReviewTransportErrorWithListenerErrorTest {

  @Test
  void aListenerErrorWhileTheTransportsErrorIsRecordedStillLeavesItPending() throws Exception {
    AtomicBoolean armed = new AtomicBoolean(true);
    Harness h = new Harness(Harness.POLICY, b -> b.listener(e -> {
      if (e instanceof IdemEvent.AttemptFinished && armed.compareAndSet(true, false)) {
        throw new AssertionError("listener invariant broken");
      }
    }));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    AssertionError broken = new AssertionError("codec invariant broken");
    ScriptedTransport t = h.transport(op).then(status(201)).checkOnSend(s -> {
      throw broken;
    });

    Throwable told = assertThrows(Throwable.class, () -> h.executor.execute(op, t));
    assertEquals(1, t.count());
    OperationRecord r = h.record(op);
    assertEquals(OperationState.PENDING, r.state(), "the transport's Error must leave the operation PENDING with"
        + " its key, as docs/client.md says; journal holds " + r.state() + " under " + r.owner() + " until "
        + r.leaseExpiresAt() + " with attempts " + r.attempts() + "; caller told: " + told);
    assertEquals(1, r.attempts().size(), "the attempt that may have gone out is in the history");
    assertSame(broken, told, "execute throws the transport's Error as it is");
  }
}
