package dev.idem.testkit.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class WebhookSignerTest {
  @Test
  void anEventIdOrTypeWithQuotesAndBackslashesStillGivesValidJson() throws Exception {
    byte[] body = WebhookSigner.jsonEvent("evt_\"1\\", "order.\"paid\"", "{\"n\":1}");

    JsonNode event = new ObjectMapper().readTree(body);
    assertEquals("evt_\"1\\", event.get("id").asText());
    assertEquals("order.\"paid\"", event.get("type").asText());
    assertEquals(1, event.get("data").get("n").asInt());
  }
}
