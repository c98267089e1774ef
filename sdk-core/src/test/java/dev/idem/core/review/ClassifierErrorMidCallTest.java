package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classifier;
import dev.idem.core.IdempotencyException;
import dev.idem.core.Operation;
import dev.idem.core.Jitter;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.RetryPolicy;
import dev.idem.core.OperationState;
import dev.idem.core.Verdict;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * docs/client.md, "Your code that throws mid-call": "None of it can leave an answered attempt
 * unrecorded or the operation IN_FLIGHT", and "a classifier that throws ... Idem's default table
 * judges that attempt". A classifier that throws an Error (a NoClassDefFoundError for an optional
 * JSON library missing at run time, a StackOverflowError from a recursive rule, an AssertionError)
 * is caught nowhere in the loop: the 201 it was asked about goes unrecorded and the operation stays
 * IN_FLIGHT under the lease. Fixed: such an Error is the classifier's failure, and the default
 * table judges the attempt; only the JVM's own (OutOfMemoryError, InternalError) is passed on.
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

    // As for a RuntimeException: Idem's default table judges the 201 (a success), as the docs say.
    h.executor.execute(op, t);

    OperationRecord r = h.record(op);
    assertEquals(1, t.count());
    assertFalse(r.isLeasedAt(h.time.now()), "the operation is left " + r.state() + " under the lease");
    assertEquals(1, r.attempts().size(), "the answered 201 is not recorded: " + r.attempts());
    assertEquals(OperationState.SUCCEEDED, r.state(), r.reason());
    assertTrue(r.attempts().get(0).reason().contains("default table: the classifier threw NoClassDefFoundError"),
        r.attempts().get(0).reason());
  }

  /** The JVM's own failure is not the classifier's: it is passed on, not judged around. */
  @Test
  void anOutOfMemoryErrorIsPassedOn() throws IdempotencyException {
    OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
    Classifier starved = new Classifier() {
      @Override
      public Optional<Verdict> classify(ResponseSnapshot response) {
        throw oom;
      }

      @Override
      public Optional<Verdict> classify(IOException failure) {
        return Optional.empty();
      }
    };
    Harness h = new Harness(Harness.POLICY, b -> b.classifier(starved));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op).then(status(201));

    assertSame(oom, assertThrows(OutOfMemoryError.class, () -> h.executor.execute(op, t)));
    assertEquals(OperationState.IN_FLIGHT, h.state(op), "left as the journal last wrote it; a takeover owes it");
  }

  /** Other mid-call code that throws a non-fatal Error falls to the safety net, as a RuntimeException does. */
  @Test
  void anAssertionErrorFromTheRandomSourceEndsPendingWithTheAttemptRecorded() throws IdempotencyException {
    RetryPolicy policy = RetryPolicy.builder().jitter(Jitter.FULL).baseDelay(Duration.ofMillis(100)).build();
    Harness h = new Harness(policy, b -> b.random(() -> {
      throw new AssertionError("random source not seeded");
    }));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op).then(status(503)).otherwise(status(201));

    OperationPendingException e = assertThrows(OperationPendingException.class, () -> h.executor.execute(op, t));

    assertTrue(e.getCause() instanceof AssertionError, String.valueOf(e.getCause()));
    OperationRecord r = h.record(op);
    assertEquals(OperationState.PENDING, r.state(), r.reason());
    assertEquals(1, t.count());
    assertEquals(1, r.attempts().size(), "the answered 503 is recorded: " + r.attempts());
  }
}
