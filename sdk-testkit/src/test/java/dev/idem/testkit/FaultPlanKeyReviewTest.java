package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.testkit.TestClient.Answer;
import org.junit.jupiter.api.Test;

/**
 * Review: {@link FaultPlan#forKey} accepts any string, including ones no request can ever carry as
 * its key (empty, with a space, or quoted as {@link ReceivedRequest#keyHeader()} shows a quoted
 * key). Such a fault is never taken: the user's "the retry survives a 503" test passes without a
 * single 503 being sent, and nothing says so ({@code pending()} stays at 1 unless the test thinks
 * of asking).
 */
class FaultPlanKeyReviewTest {
  @Test
  void aKeyNoRequestCanCarryIsRefused() {
    try (IdempotentServer server = IdempotentServer.start()) {
      FaultPlan plan = server.plan();
      assertThrows(IllegalArgumentException.class, () -> plan.forKey("", Fault.status(503)),
          "an empty key: the fault could never be taken");
      assertThrows(IllegalArgumentException.class, () -> plan.forKey("order 1", Fault.status(503)),
          "a key with a space: the server refuses such a key with 400, so the fault could never be taken");
      assertEquals(0, plan.pending(), "nothing scheduled that no request can take: " + plan);
    }
  }

  @Test
  void aQuotedKeyIsTheSameKeyOrIsRefused() throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      try {
        // The key as ReceivedRequest.keyHeader() shows it for a client that quotes (RFC 8941).
        server.plan().forKey("\"k-1\"", Fault.status(503));
      } catch (IllegalArgumentException refused) {
        return; // refused at once: fine
      }
      Answer a = new TestClient().post(server.url("/orders"), "\"k-1\"", "{}");
      assertEquals(503, a.status(), "a fault planned for the key \"k-1\" (quoted) was accepted but never taken"
          + " by a request with that key; still pending: " + server.plan().pending());
    }
  }
}
