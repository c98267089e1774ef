package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The copies journals make of a record: attempts appended in order, nothing else lost. */
class OperationRecordTest {
  private static final Instant T0 = Instant.parse("2026-12-03T10:00:00Z");

  private static OperationRecord pending() {
    RequestSnapshot req = Requests.order("{\"k\":\"a\"}");
    return OperationRecord.pending(new NewOperation(new OperationId("tenant", "create-order", IdempotencyKey.of("k-1")),
        "ref-1", Fingerprinter.defaults().fingerprint(req), req, T0));
  }

  private static AttemptRecord attempt(int number, int status) {
    return new AttemptRecord(number, 1, T0.plusSeconds(number), T0.plusSeconds(number), Classification.TRANSIENT,
        status, null, "HTTP " + status, Duration.ZERO, "test");
  }

  @Test
  void attemptsAreAppendedInOrderToAListNobodyCanChange() {
    OperationRecord one = pending().withAttempt(attempt(1, 503), T0.plusSeconds(1));
    OperationRecord two = one.withAttempt(attempt(2, 502), T0.plusSeconds(2));
    OperationRecord three = two.withAttempt(attempt(3, 500), T0.plusSeconds(3));
    assertEquals(List.of(attempt(1, 503)), one.attempts());
    assertEquals(List.of(attempt(1, 503), attempt(2, 502)), two.attempts());
    assertEquals(List.of(attempt(1, 503), attempt(2, 502), attempt(3, 500)), three.attempts());
    assertEquals(T0.plusSeconds(3), three.updatedAt());
    assertEquals(one.request(), three.request());
    assertEquals(one.appReference(), three.appReference());
    assertThrows(UnsupportedOperationException.class, () -> three.attempts().add(attempt(4, 500)));
    assertThrows(NullPointerException.class, () -> one.withAttempt(null, T0));
  }

  @Test
  void anAttemptAndATransitionInOneCopyEqualTheTwoCopies() {
    OperationRecord claimed = pending().withAttempt(attempt(1, 503), T0.plusSeconds(1))
        .with(OperationState.IN_FLIGHT, "owner-1", 2, T0.plusSeconds(30), null, T0.plusSeconds(2), null, null);
    ResponseSnapshot response = new ResponseSnapshot(201, Map.of("content-type", List.of("application/json")),
        "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    Instant at = T0.plusSeconds(4);
    OperationRecord twoCopies = claimed.withAttempt(attempt(2, 201), T0.plusSeconds(3))
        .with(OperationState.SUCCEEDED, "owner-1", 2, null, null, at, response, "HTTP 201");
    OperationRecord oneCopy = claimed.withAttemptAnd(attempt(2, 201), OperationState.SUCCEEDED, "owner-1", 2, null,
        null, at, response, "HTTP 201");
    assertEquals(twoCopies, oneCopy);
    assertEquals(List.of(attempt(1, 503), attempt(2, 201)), oneCopy.attempts());
  }
}
