package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A response the server marks as the replay of its stored answer for the key
 * ({@code Idempotent-Replayed: true}) ends the retries: another attempt with the same key only gets
 * the same answer. A replayed 303 See Other is the server's "done, see there": SUCCEEDED. A
 * replayed status that does not say the request was done ends at once, UNCERTAIN if it may follow
 * the effect, never FAILED then. Found by a review on 2026-12-06: a Post/Redirect/Get server's
 * replayed 303 burned every attempt and ended UNCERTAIN.
 */
class ReplayedAnswerStopsRetriesTest {
  private static final Map<String, String> REPLAYED = Map.of("Idempotent-Replayed", "true", "Location", "/orders/1");
  private static final Map<String, String> FIRST = Map.of("Location", "/orders/1");

  private final Harness h = new Harness();
  private final Operation op = Operation.builder("create-order", Requests.order("{\"sku\":\"A-1\"}")).build();

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aReplayedSeeOtherSucceedsOnTheReplay(Driver driver) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(303, FIRST), status(303, REPLAYED), status(303, REPLAYED));

    Outcome outcome = driver.run(h, op, t);

    assertEquals(303, outcome.response().status());
    assertTrue(outcome.replayed());
    assertEquals(2, t.count(), "the first 303 is retried once; its replay ends the operation");
    assertSameKey(t);
    OperationRecord r = h.record(op);
    assertEquals(OperationState.SUCCEEDED, r.state());
    assertEquals(303, r.response().status());
    assertEquals(List.of(Classification.AMBIGUOUS, Classification.SUCCESS),
        r.attempts().stream().map(AttemptRecord::classification).toList());
  }

  /** A first 303 that is not a replay is still ambiguous: it alone never reports success. */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void aSeeOtherThatIsNoReplayIsStillRetriedAndEndsUncertain(Driver driver) throws Exception {
    ScriptedTransport t = h.transport(op).otherwise(status(303, FIRST));

    assertThrows(OperationUncertainException.class, () -> driver.run(h, op, t));

    assertEquals(4, t.count());
    assertSameKey(t);
    assertEquals(OperationState.UNCERTAIN, h.state(op));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aReplayedServerErrorEndsUncertainAtOnce(Driver driver) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(502), status(500, REPLAYED)).otherwise(status(201));

    OperationUncertainException e = assertThrows(OperationUncertainException.class, () -> driver.run(h, op, t));

    assertEquals(2, t.count(), "no attempt after the replay: the server would replay the same 500");
    assertSameKey(t);
    OperationRecord r = h.record(op);
    assertEquals(OperationState.UNCERTAIN, r.state());
    assertTrue(r.reason().contains("replayed its stored answer"), r.reason());
    assertEquals(500, e.lastResponse().orElseThrow().status());
  }

  /** 301 and 302 do not say the request was done: replayed, they end UNCERTAIN, not SUCCEEDED. */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void aReplayedFoundEndsUncertainNotSucceeded(Driver driver) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(302, REPLAYED)).otherwise(status(201));

    assertThrows(OperationUncertainException.class, () -> driver.run(h, op, t));

    assertEquals(1, t.count());
    assertEquals(OperationState.UNCERTAIN, h.state(op));
  }

  /** A stored 503 says "not processed"; replayed it stops the retries, and ends as giving up after it would. */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void aReplayedUnavailableStopsAndEndsFailedWhenNothingMayHaveTakenEffect(Driver driver) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(503, REPLAYED)).otherwise(status(201));

    assertThrows(OperationFailedException.class, () -> driver.run(h, op, t));

    assertEquals(1, t.count());
    assertEquals(OperationState.FAILED, h.state(op));
  }

  /** A replayed 4xx takes the permanent path, as without the marker. */
  @ParameterizedTest
  @EnumSource(Driver.class)
  void aReplayedClientErrorIsPermanentAsBefore(Driver driver) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(404, REPLAYED)).otherwise(status(201));

    assertThrows(OperationFailedException.class, () -> driver.run(h, op, t));

    assertEquals(1, t.count());
    assertEquals(OperationState.FAILED, h.state(op));
  }

  private void assertSameKey(ScriptedTransport t) {
    t.sent().forEach(s -> assertEquals(op.id().key(), s.key(), "attempt " + s.number()));
  }
}
