package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.fail;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What an earlier attempt that may have taken effect changes, on the synchronous and the
 * asynchronous path alike: a "key reused" answer after it ends UNCERTAIN, not FAILED; and
 * executing the operation again past its age limit ends it as resume would, sending nothing.
 */
class AmbiguousHistoryOnBothDriversTest {
  private static final String REUSED = "{\"error\":\"key reused with different parameters\"}";

  /** Denies the first retry (leaving the operation PENDING, as an empty budget does), then allows. */
  private final AtomicBoolean denyNext = new AtomicBoolean(false);

  private Harness harness() {
    return new Harness(Harness.POLICY, b -> b.serverKeyRetention(Duration.ofHours(24))
        .circuitBreaker(CircuitBreakerSettings.disabled())
        .retryBudget(new RetryBudget() {
          @Override
          public boolean tryAcquireRetry(String host) {
            return !denyNext.getAndSet(false);
          }

          @Override
          public void onSuccess(String host) {}
        }));
  }

  private static Operation order(String body) {
    return Operation.builder("create-order", Requests.order(body)).build();
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aKeyReusedAnswerAfterAnAmbiguousAttemptEndsUncertainAndStaysSoFromTheJournal(Driver d) throws Exception {
    Harness h = harness();
    Operation op = order("{\"n\":1}");
    ScriptedTransport t = h.transport(op).then(fail(new SocketTimeoutException("Read timed out")),
        status(422, Map.of(), REUSED)).otherwise(status(201));

    OperationUncertainException e = assertThrows(OperationUncertainException.class, () -> d.run(h, op, t));

    assertEquals(2, t.count());
    assertEquals(List.of(op.id().key(), op.id().key()),
        t.sent().stream().map(ScriptedTransport.Sent::key).toList(), "one key on every attempt");
    OperationRecord r = h.record(op);
    assertEquals(OperationState.UNCERTAIN, r.state());
    assertTrue(r.reason().contains("HTTP 422") && r.reason().contains("may have taken effect"), r.reason());
    assertEquals(422, e.lastResponse().orElseThrow().status());
    // Executed again: told from the journal, UNCERTAIN still, nothing sent.
    OperationUncertainException again = assertThrows(OperationUncertainException.class, () -> d.run(h, op, t));
    assertTrue(again.fromJournal());
    assertEquals(2, t.count());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aKeyReusedAnswerAfterOnlyUnsentAttemptsStillEndsFailedAsReused(Driver d) throws Exception {
    Harness h = harness();
    Operation op = order("{\"n\":2}");
    ScriptedTransport t = h.transport(op).then(fail(new ConnectException("Connection refused")),
        status(422, Map.of(), REUSED)).otherwise(status(201));

    assertThrows(IdempotencyKeyReusedException.class, () -> d.run(h, op, t));

    assertEquals(2, t.count());
    assertEquals(OperationState.FAILED, h.state(op));
    assertThrows(IdempotencyKeyReusedException.class, () -> d.run(h, op, t), "as found in the journal");
    assertEquals(2, t.count());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void executingAgainPastTheAgeLimitEndsAnAmbiguousOperationUncertainUnsent(Driver d) throws Exception {
    Harness h = harness();
    Operation op = order("{\"n\":3}");
    denyNext.set(true);  // the retry after the timeout is refused: the call ends PENDING
    ScriptedTransport day1 = h.transport(op).then(fail(new SocketTimeoutException("Read timed out")));
    assertThrows(OperationPendingException.class, () -> d.run(h, op, day1));
    assertEquals(OperationState.PENDING, h.state(op));

    h.time.advance(Duration.ofHours(48));
    ScriptedTransport day3 = h.transport(op).otherwise(status(201));
    OperationUncertainException e = assertThrows(OperationUncertainException.class, () -> d.run(h, op, day3));

    assertEquals(0, day3.count(), "not sent again past the server's key retention");
    assertEquals(OperationState.UNCERTAIN, h.state(op));
    assertTrue(h.record(op).reason().contains("age limit"), h.record(op).reason());
    assertInstanceOf(OperationUncertainException.class, e);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void executingAgainPastTheAgeLimitEndsANeverSentOperationFailedUnsent(Driver d) throws Exception {
    Harness h = harness();
    Operation op = order("{\"n\":4}");
    denyNext.set(true);
    ScriptedTransport day1 = h.transport(op).then(fail(new ConnectException("Connection refused")));
    assertThrows(OperationPendingException.class, () -> d.run(h, op, day1));
    assertEquals(OperationState.PENDING, h.state(op));

    h.time.advance(Duration.ofHours(48));
    ScriptedTransport day3 = h.transport(op).otherwise(status(201));
    assertThrows(OperationFailedException.class, () -> d.run(h, op, day3));

    assertEquals(0, day3.count());
    assertEquals(OperationState.FAILED, h.state(op));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void executingAgainWithinTheAgeLimitSendsWithTheSameKey(Driver d) throws Exception {
    Harness h = harness();
    Operation op = order("{\"n\":5}");
    denyNext.set(true);
    ScriptedTransport day1 = h.transport(op).then(fail(new SocketTimeoutException("Read timed out")));
    assertThrows(OperationPendingException.class, () -> d.run(h, op, day1));

    h.time.advance(Duration.ofHours(1));
    ScriptedTransport later = h.transport(op).otherwise(status(201));
    d.run(h, op, later);

    assertEquals(1, later.count());
    assertEquals(op.id().key(), later.sent().get(0).key());
    assertEquals(OperationState.SUCCEEDED, h.state(op));
  }
}
