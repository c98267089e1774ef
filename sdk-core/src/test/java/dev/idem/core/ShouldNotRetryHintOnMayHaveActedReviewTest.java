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
 * A Stripe-style server answers 500 with {@code Stripe-Should-Retry: false}: it failed after the
 * request began executing (Stripe saves such a result under the key and replays it, so retrying is
 * pointless), and the effect may exist. The app chains {@code Classifier.shouldRetryHeader} before
 * the defaults, as docs/client.md shows. The default table says a 500 may follow the effect (README:
 * "500 ... UNCERTAIN"), and guarantee 4 says failure is never reported while the effect may exist;
 * the header's "false" may stop the retries, but it cannot prove nothing was done: the operation must
 * end UNCERTAIN, not FAILED. The same hint's "true" already keeps such a status AMBIGUOUS.
 */
class ShouldNotRetryHintOnMayHaveActedReviewTest {
  private final Harness h = new Harness(Harness.POLICY, b -> b.classifier(
      Classifier.shouldRetryHeader("Stripe-Should-Retry").orElse(Classifier.defaults())));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aDoNotRetryHintOnA500NeverEndsFailed(Driver d) throws Exception {
    ScriptedTransport t = h.transport(op).otherwise(status(500, Map.of("Stripe-Should-Retry", "false")));

    Exception e = assertThrows(Exception.class, () -> d.run(h, op, t));

    assertEquals(1, t.count(), "the hint says not to retry");
    assertEquals(OperationState.UNCERTAIN, h.state(op),
        "a 500 may follow the effect (the default table calls it AMBIGUOUS), yet the operation ended "
            + h.state(op) + ": " + e);
  }
}
