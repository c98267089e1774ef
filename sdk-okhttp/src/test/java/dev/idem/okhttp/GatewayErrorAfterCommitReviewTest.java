package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.assertKeyOnEveryRequest;
import static dev.idem.okhttp.Fixture.client;
import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.core.OperationException;
import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import okhttp3.Response;

/**
 * A target that goes down mid-operation behind its gateway: the first POST reaches the backend,
 * which commits the order, then the gateway answers 500/502/504 (the backend died or hung before
 * answering); for the rest of the outage every attempt gets 503 from the gateway. The default policy
 * spends its 5 attempts with the same key. The effect exists, yet the README's guarantee 4 says
 * "Failure is never reported while the effect may exist: the operation is UNCERTAIN instead".
 * The test kit's own {@code Fault.commitThenStatus} says so too: "a client that treats a 5xx as
 * 'nothing happened' would be wrong".
 */
class GatewayErrorAfterCommitReviewTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  @ParameterizedTest
  @ValueSource(ints = {500, 502, 504})
  void anOrderCommittedBehindA5xxIsNeverReportedFailed(int firstAnswer) throws Exception {
    IdempotentServer server = serverExtension.server();
    server.plan().next(Fault.commitThenStatus(firstAnswer)).forNext(4, Fault.status(503));
    IdemOkHttp idem = f.idem();
    IdempotentOperation op = IdempotentOperation.of("create-order");

    String told;
    try (Response r = client(idem).newCall(order(server.url("/orders"), op)).execute()) {
      told = "response " + r.code() + " " + IdempotencyResult.of(r).orElseThrow().state();
    } catch (OperationException e) {
      told = e.getClass().getSimpleName() + " " + e.state();
    }

    assertKeyOnEveryRequest(server, op.key().value(), 5);
    assertEquals(1, server.effectCount(op.key().value()), "the order exists at the server");
    assertNotEquals(OperationState.FAILED, f.record(op).state(),
        "journal says FAILED (caller told: " + told + ") although the first attempt's " + firstAnswer
            + " came after the server committed the order");
  }
}
