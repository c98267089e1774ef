package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.Operation;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A transport that throws an Error from the send call itself (a custom Transport's or
 * AsyncTransport's AssertionError, a codec's NoClassDefFoundError) on the half-open breaker's
 * probe. The async driver caught only a RuntimeException from sendAsync, the sync driver only
 * IOException and RuntimeException from send: the probe stayed IN_FLIGHT under the lease, unrecorded,
 * and the breaker's permission was never given back, so every later call to a host that answers
 * was refused. Both drivers now agree with what the async driver does for an Error its transport's
 * future completes with: the attempt is recorded AMBIGUOUS (it may have gone out), the operation is
 * PENDING with its key, the permission is given back; the caller gets the Error as it is.
 */
class TransportErrorOnProbeBothDriversTest {

  @ParameterizedTest
  @EnumSource(Driver.class)
  void anErrorFromTheSendCallLeavesTheProbePendingAndTheBreakerUsable(Driver d) throws Exception {
    CircuitBreakerSettings breaker = CircuitBreakerSettings.builder().slidingWindowSize(2).minimumCalls(2)
        .openFor(Duration.ofSeconds(10)).halfOpenProbes(1).build();
    RetryPolicy once = RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(5)).build();
    Harness h = new Harness(once, b -> b.circuitBreaker(breaker).retryBudget(RetryBudget.unlimited()));
    for (int i = 1; i <= 2; i++) {
      Operation down = Operation.builder("create-order", Requests.order("{\"amount\":" + i + "}")).build();
      ScriptedTransport t = new ScriptedTransport(h.time).then(status(503));
      assertThrows(OperationFailedException.class, () -> d.run(h, down, t));
    }
    h.time.advance(Duration.ofMillis(10_001));

    Operation probe = Operation.builder("create-order", Requests.order("{\"amount\":3}")).build();
    AssertionError broken = new AssertionError("codec invariant broken");
    ScriptedTransport probeT = new ScriptedTransport(h.time).then(status(201)).checkOnSend(s -> {
      throw broken;
    });
    Throwable told = assertThrows(Throwable.class, () -> d.run(h, probe, probeT));
    if (told instanceof CompletionException && told.getCause() != null) {
      told = told.getCause();
    }
    assertEquals(broken, told, "the transport's Error reaches the caller as it is");
    assertEquals(1, probeT.count());
    OperationRecord r = h.record(probe);
    assertEquals(OperationState.PENDING, r.state(), "the probe is left as after an interruption");
    assertEquals(1, r.attempts().size(), "the attempt that may have gone out is in the history");
    AttemptRecord a = r.attempts().get(0);
    assertEquals(Classification.AMBIGUOUS, a.classification());

    // Executed again: the breaker's permission was given back, so it is sent, with the same key.
    ScriptedTransport againT = new ScriptedTransport(h.time).otherwise(status(201));
    d.run(h, probe, againT);
    assertEquals(1, againT.count(), "the probe's permission was given back: the host that answers is sent to");
    assertEquals(probeT.sent().get(0).key(), againT.sent().get(0).key());
    assertEquals(OperationState.SUCCEEDED, h.state(probe));
  }
}
