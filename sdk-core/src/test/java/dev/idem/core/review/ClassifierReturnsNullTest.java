package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.core.Classifier;
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
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A classifier written as "return null when I have no opinion" (a common slip with Optional). The
 * Classifier Javadoc promises that a classifier that misbehaves (throws) is logged and the default
 * table judges the attempt instead, and that attempt's reason says so. A null answer instead
 * escapes as a raw NullPointerException from {@code execute} after the attempt was sent: the
 * server's answer is not recorded, and the operation stays IN_FLIGHT under the lease.
 */
class ClassifierReturnsNullTest {

  @SuppressWarnings("OptionalAssignedToNull")
  private static final Classifier NULL_WHEN_NO_OPINION = new Classifier() {
    @Override
    public Optional<Verdict> classify(ResponseSnapshot response) {
      return response.status() == 404 ? Optional.of(Verdict.transientFailure("replica lag")) : null;
    }

    @Override
    public Optional<Verdict> classify(IOException failure) {
      return null;
    }
  };

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aNullVerdictIsJudgedByTheDefaultTableAndRecorded(Driver d) throws IdempotencyException {
    Harness h = new Harness(Harness.POLICY, b -> b.classifier(NULL_WHEN_NO_OPINION));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op).then(status(503), status(201));

    Throwable escaped = null;
    try {
      d.run(h, op, t);
    } catch (Throwable e) {
      escaped = e;
    }

    OperationRecord r = h.record(op);
    assertNotEquals(OperationState.IN_FLIGHT, r.state(), "the classifier answered null for a 503 and "
        + escaped + " escaped; the attempt is unrecorded (" + r.attempts().size() + " attempts) and the operation"
        + " is left IN_FLIGHT");
    assertEquals(OperationState.SUCCEEDED, r.state(), "503 retried by the default table, then 201: " + escaped);
    assertEquals(2, t.count());
  }
}
