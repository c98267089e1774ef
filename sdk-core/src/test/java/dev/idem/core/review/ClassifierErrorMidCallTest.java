package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Classifier;
import dev.idem.core.IdempotencyException;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.Verdict;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.io.IOException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * docs/client.md, "Your code that throws mid-call": "None of it can leave an answered attempt
 * unrecorded or the operation IN_FLIGHT", and "a classifier that throws ... Idem's default table
 * judges that attempt". A classifier that throws an Error (a NoClassDefFoundError for an optional
 * JSON library missing at run time, a StackOverflowError from a recursive rule, an AssertionError)
 * is caught nowhere in the loop: the 201 it was asked about goes unrecorded and the operation stays
 * IN_FLIGHT under the lease.
 */
class ClassifierErrorMidCallTest {
  @Test
  void aClassifierThatThrowsAnErrorLeavesTheAnsweredAttemptUnrecorded() throws IdempotencyException {
    Classifier broken = new Classifier() {
      @Override
      public Optional<Verdict> classify(ResponseSnapshot response) {
        throw new NoClassDefFoundError("com/fasterxml/jackson/databind/ObjectMapper");
      }

      @Override
      public Optional<Verdict> classify(IOException failure) {
        return Optional.empty();
      }
    };
    Harness h = new Harness(Harness.POLICY, b -> b.classifier(broken));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op).then(status(201));

    assertThrows(Throwable.class, () -> h.executor.execute(op, t));

    OperationRecord r = h.record(op);
    assertEquals(1, t.count());
    assertFalse(r.isLeasedAt(h.time.now()), "the operation is left " + r.state() + " under the lease");
    assertEquals(1, r.attempts().size(), "the answered 201 is not recorded: " + r.attempts());
  }
}
