package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Which statuses mean key reused, key missing and in flight, and how key reuse is reported. */
class ProtocolStatusesTest {
  // The bodies the test kit's reference server sends.
  private static final String REUSED_BODY = "{\"type\":\"https://idem.dev/problems/idempotency-key-reused\","
      + "\"title\":\"Idempotency-Key reused with a different request\",\"status\":409,\"detail\":\"This"
      + " Idempotency-Key was already used with a different request payload; the key was reused, use a new key"
      + " for a new operation.\"}";
  private static final String IN_FLIGHT_BODY = "{\"type\":\"https://idem.dev/problems/idempotency-key-in-flight\","
      + "\"title\":\"A request with this Idempotency-Key is still being processed\",\"status\":409,\"detail\":"
      + "\"Retry after the first request has completed; the retry will get its result.\"}";

  private final List<IdemEvent> events = Collections.synchronizedList(new ArrayList<>());
  private final Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();

  private Harness harness(ProtocolStatuses protocol) {
    return new Harness(Harness.POLICY, b -> b.protocol(protocol).listener(events::add));
  }

  private List<IdemEvent.KeyMismatch> mismatches() {
    synchronized (events) {
      return events.stream().filter(IdemEvent.KeyMismatch.class::isInstance).map(IdemEvent.KeyMismatch.class::cast)
          .toList();
    }
  }

  static Stream<Arguments> reuseFlavours() {
    return Stream.of(
        Arguments.of("IETF 422", ProtocolStatuses.ietfDraft(), 422, "{}"),
        Arguments.of("417 on reuse", ProtocolStatuses.reuseAs417(), 417, "{}"),
        Arguments.of("409 on reuse", ProtocolStatuses.reuseAs409(), 409, REUSED_BODY));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("reuseFlavours")
  void aReusedKeyThrowsAndEmitsKeyMismatchLiveAndAgainFromTheJournal(String name, ProtocolStatuses protocol,
      int status, String body) throws Exception {
    for (Driver d : Driver.values()) {
      events.clear();
      Harness h = harness(protocol);
      ScriptedTransport t = h.transport(op).then(status(status, Map.of(), body)).otherwise(status(201));

      IdempotencyKeyReusedException live = assertThrows(IdempotencyKeyReusedException.class, () -> d.run(h, op, t));
      IdempotencyKeyReusedException again = assertThrows(IdempotencyKeyReusedException.class,
          () -> d.run(h, op, t));

      assertTrue(live.detectedByServer() && again.detectedByServer(), d + ": both say the server refused it");
      assertEquals(op.id(), again.operationId());
      assertEquals(1, t.count(), d + ": the second execution sent nothing");
      assertEquals(OperationState.FAILED, h.state(op));
      assertEquals(List.of(new IdemEvent.KeyMismatch(op.id(), true), new IdemEvent.KeyMismatch(op.id(), true)),
          mismatches(), d + ": one KeyMismatch per execution");
      assertEquals(1, h.record(op).attempts().size());
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void underTheIetfDefaultA417IsAnOrdinaryPermanentFailure(Driver d) throws Exception {
    Harness h = harness(ProtocolStatuses.ietfDraft());
    ScriptedTransport t = h.transport(op).then(status(417)).otherwise(status(201));

    OperationFailedException e = assertThrows(OperationFailedException.class, () -> d.run(h, op, t));

    assertEquals(417, e.lastResponse().orElseThrow().status());
    assertFalse(e.fromJournal());
    assertEquals(List.of(), mismatches());
    OperationFailedException again = assertThrows(OperationFailedException.class, () -> d.run(h, op, t));
    assertTrue(again.fromJournal(), "the second execution sent nothing and says so");
    assertEquals(1, t.count());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void with409OnReuseTheBodyTellsReuseFromInFlight(Driver d) throws Exception {
    Harness h = harness(ProtocolStatuses.reuseAs409());
    ScriptedTransport t = h.transport(op).then(status(409, Map.of(), IN_FLIGHT_BODY),
        status(409, Map.of(), IN_FLIGHT_BODY), status(409, Map.of(), REUSED_BODY)).otherwise(status(201));

    // The in-flight answers are recorded AMBIGUOUS (a request with this key was running), so the
    // refusal after them ends UNCERTAIN, as giving up after in-flight answers does: never FAILED
    // while the history holds an attempt that may have taken effect.
    assertThrows(OperationUncertainException.class, () -> d.run(h, op, t));

    assertEquals(3, t.count(), "two in-flight waits, then the refusal");
    assertEquals(List.of(Duration.ofSeconds(1), Duration.ofSeconds(2)), h.time.sleeps());
    List<AttemptRecord> attempts = h.record(op).attempts();
    assertEquals(Classification.AMBIGUOUS, attempts.get(0).classification());
    assertEquals(Classification.PERMANENT, attempts.get(2).classification());
  }

  @Test
  void the409PresetLeansTowardsInFlight() {
    ProtocolStatuses p = ProtocolStatuses.reuseAs409();
    assertTrue(p.isInFlight(ScriptedTransport.response(409)), "an empty body");
    assertTrue(p.isInFlight(ScriptedTransport.response(409, Map.of(), "{\"code\":\"idempotency_key_in_use\"}")));
    assertTrue(p.isInFlight(ScriptedTransport.response(409, Map.of(),
        "another request with a different body is still in progress")), "mentions both: in flight wins");
    assertTrue(p.isKeyReused(ScriptedTransport.response(409, Map.of(), "Idempotency key mismatch")));
    assertFalse(p.isKeyReused(ScriptedTransport.response(422, Map.of(), "mismatch")), "422 is not reuse here");
  }

  @Test
  void aCustomPredicateAndStatusesCanBeDeclared() {
    ProtocolStatuses p = ProtocolStatuses.builder()
        .keyReused(400, r -> new String(r.body()).contains("same parameters"))
        .keyMissing(428, r -> true)
        .inFlight(423, r -> true)
        .build();
    assertTrue(p.isKeyReused(ScriptedTransport.response(400, Map.of(), "use the same parameters")));
    assertFalse(p.isKeyReused(ScriptedTransport.response(400, Map.of(), "amount must be positive")));
    assertTrue(p.isKeyMissing(ScriptedTransport.response(428)));
    assertTrue(p.isInFlight(ScriptedTransport.response(423)));
    assertFalse(p.isInFlight(ScriptedTransport.response(409)));
    assertThrows(IllegalArgumentException.class, () -> ProtocolStatuses.builder().keyReused(200));
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aDeclaredKeyMissingStatusFailsAtOnceAsAConfigurationError(Driver d) throws Exception {
    Harness h = harness(ProtocolStatuses.builder().keyMissing(428, r -> true).build());
    ScriptedTransport t = h.transport(op).then(status(428)).otherwise(status(201));

    OperationFailedException e = assertThrows(OperationFailedException.class, () -> d.run(h, op, t));

    assertEquals(1, t.count());
    assertTrue(e.getMessage().contains("missing or malformed"), e.getMessage());
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aDeclaredInFlightStatusWaitsInsteadOfFailing(Driver d) throws Exception {
    Harness h = harness(ProtocolStatuses.builder().inFlight(423, r -> true).build());
    ScriptedTransport t = h.transport(op).then(status(423), status(423)).otherwise(status(201));

    Outcome out = d.run(h, op, t);

    assertEquals(3, out.attempts().size());
    assertEquals(List.of(Duration.ofSeconds(1), Duration.ofSeconds(2)), h.time.sleeps());
  }
}
