package dev.idem.webhooks.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The checksum is stored with every accepted event and checked on every claim and read, so its
 * bytes are a format: these values were computed by the first version (one length-prefixed
 * concatenation digested whole). Digesting the pieces instead of a copy must not change one bit,
 * or every event already in an inbox would read as damaged.
 */
class EventChecksumTest {
  @Test
  void theChecksumOfAnEventIsTheOneStoredByTheFirstVersion() {
    byte[] body = "{\"total\":\"17.00\"}".getBytes(StandardCharsets.UTF_8);
    assertEquals("f26d337778bb7691fd9f16521efc07ce2b855f44a148edb11737fd45ebd544f5",
        Hmac.toHex(EventChecksum.of("stripe", "evt_1", "invoice.paid", body)));
    assertEquals("30495147991ac2e51634339a979252d8e96fa86d0f5f87ecc5b22bb6ddd1c768",
        Hmac.toHex(EventChecksum.of("acme", "\u00e9vt", null, new byte[0])), "non-ASCII id, no type, empty body");
  }

  @Test
  void aByteMovedBetweenFieldsChangesTheChecksum() {
    byte[] stored = EventChecksum.of("acme", "ab", "c", new byte[] {1});
    assertTrue(EventChecksum.matches(stored, "acme", "ab", "c", new byte[] {1}));
    assertFalse(EventChecksum.matches(stored, "acme", "a", "bc", new byte[] {1}), "the lengths are digested too");
  }
}
