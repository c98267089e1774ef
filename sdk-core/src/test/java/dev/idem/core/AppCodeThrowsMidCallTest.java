package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The app's own code that the executor calls mid-call (the random source, the retry budget) throws
 * once an operation is claimed. Whatever it is, the attempt that was sent is recorded, the
 * operation is not left IN_FLIGHT under the lease, and the caller is told what the journal holds:
 * PENDING, with the app's exception as the cause, sent again later with the same key.
 */
class AppCodeThrowsMidCallTest {
  private final Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();

  /** The random source throws when the retry after a 503 is decided: the 503 was sent and answered. */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void aRandomSourceThatThrowsAfterTheAnswerLeavesItRecordedAndPending(Driver d) throws Exception {
    IllegalStateException broken = new IllegalStateException("entropy pool closed");
    AtomicInteger draws = new AtomicInteger();
    Harness h = new Harness(Harness.POLICY, b -> b.random(() -> {
      if (draws.getAndIncrement() == 0) {
        throw broken;
      }
      return 0.5;
    }));
    ScriptedTransport t = h.transport(op).then(status(503)).otherwise(status(201));

    OperationPendingException e = assertThrows(OperationPendingException.class, () -> d.run(h, op, t));

    assertSame(broken, e.getCause(), "the caller is told what threw: " + e);
    OperationRecord r = h.record(op);
    assertEquals(OperationState.PENDING, r.state(), r.reason());
    assertFalse(r.isLeasedAt(h.time.now()), "the lease is given back");
    assertEquals(1, r.attempts().size(), "the sent attempt is recorded: " + r.attempts());
    assertEquals(503, r.attempts().get(0).status());
    assertEquals(1, t.count());

    h.time.advance(Duration.ofMinutes(1));
    d.run(h, op, t);

    assertEquals(OperationState.SUCCEEDED, h.state(op));
    assertEquals(2, t.count());
    assertEquals(t.sent().get(0).key(), t.sent().get(1).key(), "sent again with the same key");
  }

  /** The budget throws when asked for the retry: the operation is claimed, nothing more is sent. */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void aBudgetThatThrowsOnTheRetryGivesTheClaimBack(Driver d) throws Exception {
    IllegalStateException broken = new IllegalStateException("budget store unreachable");
    Harness h = new Harness(Harness.POLICY, b -> b.retryBudget(new RetryBudget() {
      @Override
      public boolean tryAcquireRetry(String host) {
        throw broken;
      }

      @Override
      public void onSuccess(String host) {}
    }));
    ScriptedTransport t = h.transport(op).then(status(503)).otherwise(status(201));

    OperationPendingException e = assertThrows(OperationPendingException.class, () -> d.run(h, op, t));

    assertSame(broken, e.getCause(), "the caller is told what threw: " + e);
    OperationRecord r = h.record(op);
    assertEquals(OperationState.PENDING, r.state(), r.reason());
    assertFalse(r.isLeasedAt(h.time.now()), "the claim is given back");
    assertEquals(1, r.attempts().size(), r.attempts().toString());
    assertEquals(1, t.count());
  }

  /**
   * The budget throws when told of a success: the 201 came back and the journal can say so. What
   * the budget does with it cannot change the operation's fate, as with a listener.
   */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void aBudgetThatThrowsOnSuccessDoesNotUndoTheSuccess(Driver d) throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.retryBudget(new RetryBudget() {
      @Override
      public boolean tryAcquireRetry(String host) {
        return true;
      }

      @Override
      public void onSuccess(String host) {
        throw new IllegalStateException("budget store unreachable");
      }
    }));
    ScriptedTransport t = h.transport(op).then(status(201));

    Outcome o = d.run(h, op, t);

    assertEquals(201, o.response().status());
    OperationRecord r = h.record(op);
    assertEquals(OperationState.SUCCEEDED, r.state(), r.reason());
    assertEquals(1, r.attempts().size());
  }
}
