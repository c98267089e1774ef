package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.fail;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Classification;
import dev.idem.core.Classifier;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Verdict;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * fdb594a9 (AttemptLoop.undecided): an attempt the loop judged but the net took over before it was
 * written keeps its class unless it is SUCCESS, "since the loop judged it, with its cautious
 * overrules". For a PERMANENT verdict on a failure that may have been sent (the app's classifier
 * says a read timeout is permanent) the loop's caution is not in the class but in permanent(): it
 * ends UNCERTAIN. When a listener throws an Error on that attempt's AttemptFinished, the net writes
 * the attempt PERMANENT beside a PENDING operation, and the history no longer says an effect may
 * exist: the next execution, refused with a 400, ends the operation FAILED although the first
 * request may have taken effect. docs/client.md and the net's Javadoc: "The history never hides an
 * effect, so whatever ends the operation later (giving up, a refusal, its age limit) never makes it
 * FAILED while the effect may exist."
 */
class ReviewSafetyNetHeldPermanentFailureTest {

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aHeldPermanentVerdictOnALostResponseStillSaysTheEffectMayExist(Driver d) throws Exception {
    AtomicBoolean armed = new AtomicBoolean(true);
    Classifier timeoutsArePermanent = new Classifier() {
      @Override
      public Optional<Verdict> classify(ResponseSnapshot response) {
        return Optional.empty();
      }

      @Override
      public Optional<Verdict> classify(IOException failure) {
        return failure instanceof SocketTimeoutException
            ? Optional.of(Verdict.permanent("read timeout: our gateway never retries")) : Optional.empty();
      }
    };
    Harness h = new Harness(Harness.POLICY, b -> b.classifier(timeoutsArePermanent).listener(e -> {
      if (e instanceof IdemEvent.AttemptFinished f && armed.compareAndSet(true, false)) {
        throw new AssertionError("listener invariant broken");
      }
    }));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();

    // The request goes out; its response is lost (read timeout). The listener throws on that attempt.
    ScriptedTransport first = h.transport(op).then(fail(new SocketTimeoutException("read timed out")));
    assertThrows(Throwable.class, () -> d.run(h, op, first));
    OperationRecord held = h.record(op);
    assertEquals(OperationState.PENDING, held.state());

    // Executed again with the same key; the server refuses this one (400).
    ScriptedTransport second = h.transport(op).then(status(400));
    assertThrows(Throwable.class, () -> d.run(h, op, second));
    OperationRecord r = h.record(op);
    assertEquals(2, first.count() + second.count());
    assertEquals(first.sent().get(0).key(), second.sent().get(0).key());
    assertEquals(OperationState.UNCERTAIN, r.state(), "the first attempt's response was lost, so it may have taken"
        + " effect; the net wrote it as " + r.attempts().get(0).classification() + " (" + r.attempts().get(0)
        + "), and the later refusal ended the operation " + r.state() + " with reason: " + r.reason());
  }
}
