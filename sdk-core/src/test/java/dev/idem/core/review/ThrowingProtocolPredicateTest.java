package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.ProtocolStatuses;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code ProtocolStatuses.reuseAs409(isReuse)} invites a body predicate; a natural one parses the
 * server's JSON error. A 409 whose body is not JSON (a proxy's HTML page) makes it throw, and the
 * executor, which asks the protocol before the classifier and outside the classifier's guard, lets
 * that exception escape {@code execute} after the attempt was sent: the answer is not recorded and
 * the operation stays IN_FLIGHT. The ProtocolStatuses Javadoc itself says misreading a 409 as
 * reuse is the dangerous mistake and "in flight" the safe one, so a predicate that cannot tell
 * should lean to in flight (a wait), not abort the call.
 */
class ThrowingProtocolPredicateTest {

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aReusePredicateThatCannotParseTheBodyDoesNotAbortTheCall(Driver d) throws Exception {
    ProtocolStatuses protocol = ProtocolStatuses.reuseAs409(r -> {
      String body = new String(r.body(), StandardCharsets.UTF_8).trim();
      if (!body.startsWith("{")) {
        throw new IllegalArgumentException("not a JSON error body");
      }
      return body.contains("\"code\":\"idempotency_key_reused\"");
    });
    Harness h = new Harness(Harness.POLICY, b -> b.protocol(protocol));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = h.transport(op)
        .then(status(409, Map.of("Content-Type", "text/html"), "<html>Conflict</html>"), status(201));

    Throwable escaped = null;
    try {
      d.run(h, op, t);
    } catch (Throwable e) {
      escaped = e;
    }

    OperationRecord r = h.record(op);
    assertNotEquals(OperationState.IN_FLIGHT, r.state(), "the protocol's body predicate threw on a non-JSON 409 and "
        + escaped + " escaped; " + r.attempts().size() + " attempts recorded, the operation is left IN_FLIGHT");
    assertEquals(OperationState.SUCCEEDED, r.state(), "409 taken as in flight, then 201: " + escaped);
  }
}
