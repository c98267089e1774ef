package dev.idem.webhooks.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * The SHA-256 an accepted event is stored with: over its source, id, type and payload, each length
 * prefixed, so that a byte changed on disk in any of them (a well-formed page still passes SQLite's
 * integrity check) is found before a handler gets the event, or a read reports it. A handler is
 * chosen by the type and given the payload, so both are bound to the event they were accepted as.
 */
final class EventChecksum {
  private EventChecksum() {
  }

  static byte[] of(String source, String eventId, String eventType, byte[] body) {
    byte[] s = utf8(source);
    byte[] id = utf8(eventId);
    byte[] type = utf8(eventType);
    // Digested piece by piece: the same bytes as one length-prefixed concatenation, without copying the payload.
    return Hmac.sha256(length(s), s, length(id), id, length(type), type, length(body), body);
  }

  /** Big-endian, as ByteBuffer.putInt wrote it when the first checksums were stored. */
  private static byte[] length(byte[] part) {
    return ByteBuffer.allocate(4).putInt(part.length).array();
  }

  /** True if {@code stored} is null (a row from before the checksum column) or matches. */
  static boolean matches(byte[] stored, String source, String eventId, String eventType, byte[] body) {
    return stored == null || MessageDigest.isEqual(stored, of(source, eventId, eventType, body));
  }

  private static byte[] utf8(String s) {
    return s == null ? new byte[0] : s.getBytes(StandardCharsets.UTF_8);
  }
}
