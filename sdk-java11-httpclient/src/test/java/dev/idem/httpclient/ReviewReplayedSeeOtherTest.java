package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.Reply;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * Review (jdkhttp): a healthy Post/Redirect/Get server makes every keyed call fail. The server
 * runs the POST once and answers 303 See Other with the new order's Location; every retry with the
 * same key gets that stored answer replayed, marked {@code Idempotent-Replayed: true}. Idem treats
 * each 303 as ambiguous whatever the replay marker says, so it sends all of the policy's attempts
 * (4 here, 5 by default, with their backoffs), then throws {@link OperationUncertainException} and
 * journals UNCERTAIN, for an operation the server has confirmed, by replaying its stored answer,
 * that it ran exactly once. A java.net.http app that followed such redirects before adding Idem
 * (Redirect.NORMAL) now gets an exception for every successful create.
 */
class ReviewReplayedSeeOtherTest {
  @Test
  void aReplayedSeeOtherIsTheOperationsAnswerNotAnotherAmbiguousAttempt() throws Exception {
    try (IdempotentServer server = IdempotentServer.builder()
        .handler(r -> Reply.json(303, "{}").withHeader("Location", "/orders/ord_" + r.effectNumber()))
        .start()) {
      Fixture f = new Fixture();
      OperationCall call = f.client.operation("create-order");
      IdempotencyKey key = call.key();

      HttpResponse<String> response = null;
      OperationUncertainException uncertain = null;
      try {
        response = call.send(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"),
            HttpResponse.BodyHandlers.ofString());
      } catch (OperationUncertainException e) {
        uncertain = e;
      }

      assertEquals(1, server.effectCount(key.value()), "the server ran the order once");
      Fixture.assertKeyOnEveryRequest(server, key, server.requestCount());
      assertNotEquals(OperationState.UNCERTAIN, f.record(call.operationId()).state(),
          "journal: UNCERTAIN although the server replayed its stored answer for the key; requests sent: "
              + server.requestCount());
      assertEquals(null, uncertain, "the call threw OperationUncertainException after " + server.requestCount()
          + " requests, each answered with the same stored 303");
      assertEquals(303, response.statusCode());
      assertEquals(2, server.requestCount(), "the first answer and one replay at most");
    }
  }
}
