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
 * the header's "false" cannot prove nothing was done: the operation must end UNCERTAIN, not FAILED
 * (it is retried with its key, as the table's AMBIGUOUS is, since no verdict stops retrying and
 * still ends UNCERTAIN for a response). The same hint's "true" already keeps such a status AMBIGUOUS.
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

    // The hint gives no opinion on a status that may follow the effect (Classifier#shouldRetryHeader):
    // the default table's AMBIGUOUS retries it, every attempt with the one key, which a server that
    // stored its answer replays.
    assertEquals(Harness.POLICY.maxAttempts(), t.count(), "retried as the default table's AMBIGUOUS");
    assertEquals(1, t.sent().stream().map(ScriptedTransport.Sent::key).distinct().count(), "one key on every attempt");
    assertEquals(OperationState.UNCERTAIN, h.state(op),
        "a 500 may follow the effect (the default table calls it AMBIGUOUS), yet the operation ended "
            + h.state(op) + ": " + e);
  }
}
