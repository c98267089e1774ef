package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Review (testkit): {@link EffectHandler}'s Javadoc says "If the handler throws, the effect still
 * counts, no result is stored, and the client gets a 500". That holds for a RuntimeException only:
 * a handler that throws an Error (an AssertionError from a JUnit assertion a test put in its
 * handler, the most natural thing to throw in a test) gets no answer at all. The dispatcher's
 * runHandler catches RuntimeException; the Error escapes into MockWebServer, which neither answers
 * nor closes the connection, so the client waits for its own read timeout (forever with
 * java.net.http's default of no timeout) and the assertion's message is never seen by the test.
 *
 * <p>Fixed: the client gets the 500, and {@link IdempotentServer#close()} rethrows the handler's
 * assertion (once), so the test fails with its message.
 */
class HandlerErrorReviewTest {
  @Test
  void aHandlerThatFailsAnAssertionAnswers500LikeAnyOtherThrowingHandler() throws Exception {
    EffectHandler asserting = request -> {
      // A test checking what its client sent, inside the handler, and finding it wrong.
      assertEquals("{\"qty\":2}", new String(request.body()), "the client sent the wrong body");
      return Reply.json(201, "{}");
    };
    IdempotentServer server = IdempotentServer.builder().handler(asserting).start();
    try {
      TestClient client = new TestClient(Duration.ofSeconds(5));
      TestClient.Answer first;
      try {
        first = client.post(server.url("/orders"), "k-assert", "{\"qty\":1}");
      } catch (IOException e) {
        throw new AssertionError("the documented 500 never came: " + e, e);
      }
      assertEquals(500, first.status(), "EffectHandler: a handler that throws gets the client a 500");
      assertEquals(1, server.effectCount("k-assert"), "the effect counts");
      assertEquals(500, client.post(server.url("/orders"), "k-assert", "{\"qty\":1}").status(),
          "nothing stored: a retry runs the handler again");
      assertEquals(2, server.effectCount("k-assert"));
    } finally {
      AssertionError reported = assertThrows(AssertionError.class, server::close,
          "close() reports the handler's failed assertion, so the test fails with it");
      assertTrue(reported.getMessage().startsWith("the client sent the wrong body"), reported.getMessage());
      assertDoesNotThrow(server::close, "reported once");
    }
  }
}
