package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.core.Jitter;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The executor's injected randomness ({@code Builder.random}) is checked nowhere when it is set;
 * a value outside [0, 1) (a test that pins the worst-case jitter with {@code () -> 1.0}) is found
 * out by Backoff only when the first retry is decided, after the attempt was sent and answered:
 * an IllegalArgumentException escapes {@code execute}, the 503 is not recorded, and the operation
 * stays IN_FLIGHT under its lease. (A custom DelayFunction gets the same value unchecked.)
 */
class InjectedRandomOutOfRangeTest {

  @ParameterizedTest
  @EnumSource(Driver.class)
  void anOutOfRangeRandomNeverLeavesASentAttemptUnrecorded(Driver d) throws Exception {
    RetryPolicy policy = RetryPolicy.builder().jitter(Jitter.FULL).baseDelay(Duration.ofMillis(100)).build();
    Harness h = new Harness(policy, b -> b.random(() -> 1.0));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op).then(status(503)).otherwise(status(201));

    Throwable escaped = null;
    try {
      d.run(h, op, t);
    } catch (Throwable e) {
      escaped = e;
    }

    OperationRecord r = h.record(op);
    assertNotEquals(OperationState.IN_FLIGHT, r.state(), "random() -> 1.0 was accepted by the builder; after the 503"
        + " " + escaped + " escaped, " + r.attempts().size() + " of " + t.count() + " sent attempts are recorded and"
        + " the operation is left IN_FLIGHT");
  }
}
