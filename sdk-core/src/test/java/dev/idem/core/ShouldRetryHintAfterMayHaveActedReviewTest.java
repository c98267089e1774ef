package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A Stripe-style server answers 502 with {@code Stripe-Should-Retry: true} on every attempt (its
 * gateway lost the backend's answer, and may say so after the backend committed). The app chains
 * {@code Classifier.shouldRetryHeader} before the defaults, as docs/client.md shows. The hint may
 * say "retry", but it cannot prove the first attempt did nothing: giving up must end UNCERTAIN,
 * never FAILED, whatever the header says.
 */
class ShouldRetryHintAfterMayHaveActedReviewTest {
  private final Harness h = new Harness(Harness.POLICY, b -> b.classifier(
      Classifier.shouldRetryHeader("Stripe-Should-Retry").orElse(Classifier.defaults())));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aShouldRetryHintOnA502NeverEndsFailed(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).otherwise(status(502, Map.of("Stripe-Should-Retry", "true")));

    OperationUncertainException e = assertThrows(OperationUncertainException.class, () -> d.run(h, op, t));

    assertEquals(OperationState.UNCERTAIN, h.state(op));
    assertEquals(Harness.POLICY.maxAttempts(), t.count(), "retried until the policy gave up");
    for (ScriptedTransport.Sent s : t.sent()) {
      assertEquals(op.key(), s.key(), "attempt " + s.number() + " used another key");
    }
    for (AttemptRecord a : e.attempts()) {
      assertEquals(Classification.AMBIGUOUS, a.classification(), a.reason());
    }
  }
}
