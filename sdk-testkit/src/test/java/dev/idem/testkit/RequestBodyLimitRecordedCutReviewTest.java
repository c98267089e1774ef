package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Review (rv-testkit): ReceivedRequest.body promises "only its first maxBodySize bytes" of a body
 * over the limit. The dispatcher cuts the bytes at the limit, then decodes them as UTF-8: a cut
 * inside a multi-byte character (any non-ASCII text: names, addresses, currency signs) ends the
 * recorded body with U+FFFD, which is 3 bytes in UTF-8. The recorded body is then not a prefix
 * of what the client sent, and holds more than maxBodySize bytes.
 */
class RequestBodyLimitRecordedCutReviewTest {
  private final TestClient client = new TestClient();

  @Test
  void aBodyCutInsideACharacterIsRecordedAsAPrefixOfWhatWasSent() throws Exception {
    try (IdempotentServer server = IdempotentServer.builder().maxBodySize(16).start()) {
      String sent = "{\"name\":\"Zoë Müller-Ångström\"}";   // byte 16 falls inside "ü"
      assertEquals(413, client.post(server.url("/customers"), "k-cut", sent).status());

      String recorded = server.recordedRequests().get(0).body();

      assertTrue(recorded.getBytes(StandardCharsets.UTF_8).length <= 16,
          "at most maxBodySize bytes, but " + recorded.getBytes(StandardCharsets.UTF_8).length + ": " + recorded);
      assertTrue(sent.startsWith(recorded), "a prefix of what was sent, not: " + recorded);
    }
  }
}
