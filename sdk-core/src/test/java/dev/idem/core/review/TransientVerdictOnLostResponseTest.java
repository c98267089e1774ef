package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Classifier;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyException;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Verdict;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A user's classifier that calls timeouts "transient" (a natural reading of the word) for an
 * attempt that got no response. When the executor's classifier says PERMANENT for such an attempt
 * it overrules it ("without a response the request may have taken effect": UNCERTAIN), and a
 * SUCCESS is overruled to AMBIGUOUS; but a TRANSIENT verdict on a lost response is taken at its
 * word, and giving up after it ends FAILED. Every attempt was written and its response lost, so
 * the effect may exist: it must end UNCERTAIN (DESIGN: failure is never reported while the effect
 * may exist).
 */
class TransientVerdictOnLostResponseTest {

  private static final Classifier TIMEOUTS_ARE_TRANSIENT = new Classifier() {
    @Override
    public Optional<Verdict> classify(ResponseSnapshot response) {
      return Optional.empty();
    }

    @Override
    public Optional<Verdict> classify(IOException failure) {
      return failure instanceof SocketTimeoutException
          ? Optional.of(Verdict.transientFailure("timeouts are transient")) : Optional.empty();
    }
  };

  @ParameterizedTest
  @EnumSource(Driver.class)
  void readTimeoutsCalledTransientStillEndUncertain(Driver d) throws IdempotencyException {
    Harness h = new Harness(Harness.POLICY, b -> b.classifier(TIMEOUTS_ARE_TRANSIENT.orElse(Classifier.defaults())));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op).otherwise(ScriptedTransport.fail(new SocketTimeoutException("Read timed out")));

    assertThrows(IdempotencyException.class, () -> d.run(h, op, t));

    OperationRecord r = h.record(op);
    assertEquals(Harness.POLICY.maxAttempts(), t.count());
    assertEquals(OperationState.UNCERTAIN, r.state(), "all " + t.count() + " attempts were sent and their responses"
        + " lost (read timeout), so the effect may exist, yet the operation ended " + r.state() + ": " + r.reason());
  }
  /**
   * The same lost response, judged TRANSIENT and retried, then a refusal (400) on the retry: the
   * first attempt may have taken effect, so the refusal cannot make the operation FAILED. The
   * verdict that retried it must not hide that from the attempts that follow.
   */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void aRefusalAfterATimeoutCalledTransientEndsUncertain(Driver d) throws IdempotencyException {
    Harness h = new Harness(Harness.POLICY, b -> b.classifier(TIMEOUTS_ARE_TRANSIENT.orElse(Classifier.defaults())));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op).then(ScriptedTransport.fail(new SocketTimeoutException("Read timed out")),
        status(400));

    assertThrows(IdempotencyException.class, () -> d.run(h, op, t));

    OperationRecord r = h.record(op);
    assertEquals(2, t.count());
    assertEquals(OperationState.UNCERTAIN, r.state(), "the first attempt's response was lost (read timeout), so a"
        + " 400 on the retry cannot prove the effect absent, yet the operation ended " + r.state() + ": " + r.reason());
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), "the journal must keep that the"
        + " first attempt may have taken effect, for every later execution: " + r.attempts().get(0));
  }

  /** A classifier that calls a read timeout SAFE ("not sent") is overruled too: it cannot know. */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void readTimeoutsCalledSafeStillEndUncertain(Driver d) throws IdempotencyException {
    Classifier timeoutsAreSafe = new Classifier() {
      @Override
      public Optional<Verdict> classify(ResponseSnapshot response) {
        return Optional.empty();
      }

      @Override
      public Optional<Verdict> classify(IOException failure) {
        return Optional.of(Verdict.safe("timeouts never reach the server"));
      }
    };
    Harness h = new Harness(Harness.POLICY, b -> b.classifier(timeoutsAreSafe.orElse(Classifier.defaults())));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op).otherwise(ScriptedTransport.fail(new SocketTimeoutException("Read timed out")));

    assertThrows(IdempotencyException.class, () -> d.run(h, op, t));

    OperationRecord r = h.record(op);
    assertEquals(Harness.POLICY.maxAttempts(), t.count());
    assertEquals(OperationState.UNCERTAIN, r.state(), r.reason());
  }
}
