package dev.idem.webhooks.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.webhooks.RejectionReason;
import dev.idem.webhooks.WebhookRejectedException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Lookups scan the caller's map instead of a sorted copy: the same answers as the copy gave. */
class HeadersTest {
  @Test
  void namesMatchInAnyCaseAndTheFirstValueIsTrimmed() throws Exception {
    Map<String, List<String>> raw = new LinkedHashMap<>();
    raw.put("Content-length", List.of("42"));
    raw.put("WEBHOOK-ID", List.of("  msg_1 ", "msg_2"));
    Headers h = Headers.of(raw);
    assertEquals("msg_1", h.require("webhook-id"));
    assertEquals("42", h.first("Content-Length"));
    assertNull(h.first("webhook-signature"));
  }

  @Test
  void namesDifferingInCaseReadAsOneFirstWithValuesFirst() {
    Map<String, List<String>> raw = new LinkedHashMap<>();
    raw.put("webhook-id", List.of());
    raw.put("Webhook-Id", List.of("first"));
    raw.put("WEBHOOK-ID", List.of("second"));
    assertEquals("first", Headers.of(raw).first("webhook-id"));
  }

  @Test
  void aBlankValueIsMissing() {
    Headers h = Headers.of(Map.of("webhook-id", List.of("   ")));
    assertNull(h.first("webhook-id"));
    WebhookRejectedException e = assertThrows(WebhookRejectedException.class, () -> h.require("webhook-id"));
    assertEquals(RejectionReason.HEADER, e.reason());
  }
}
