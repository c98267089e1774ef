package dev.idem.jdbc.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Map;

/**
 * A checksum over a stored response ({@code response_json}'s field {@code "sum"}): SHA-256 over its
 * status, its headers in stored order, and its body's stored text (or the length of a body that was
 * not kept). A replay hands the stored response to the caller as the server's answer; a changed
 * byte would otherwise be returned as if the server had sent it. Computed over the stored values,
 * not the JSON text, so that it does not depend on how Jackson spaces or escapes them.
 *
 * <p>Responses stored before the checksum existed have no {@code "sum"} and are read as before.
 */
final class ResponseCheck {
  static final String FIELD = "sum";

  private ResponseCheck() {
  }

  /** The checksum of a response document's stored values (its {@code "sum"} field excluded). */
  static String of(JsonNode response) {
    MessageDigest sha = RequestCheck.sha256();
    part(sha, "status:" + response.path("status").asText());
    JsonNode headers = response.get("headers");
    if (headers != null && headers.isObject()) {
      Iterator<Map.Entry<String, JsonNode>> it = headers.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> h = it.next();
        part(sha, "header:" + h.getKey());
        for (JsonNode v : h.getValue()) {
          part(sha, "value:" + v.asText());
        }
      }
    }
    if (response.path("bodyTruncated").asBoolean(false)) {
      part(sha, "bodyLength:" + response.path("bodyLength").asText());
    } else {
      part(sha, "body:" + response.path("body").asText());
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  /** True if the document has no checksum (stored before it existed) or its checksum matches. */
  static boolean matches(JsonNode response) {
    JsonNode stored = response.get(FIELD);
    if (stored == null) {
      return true;
    }
    return stored.isTextual() && MessageDigest.isEqual(stored.asText().getBytes(StandardCharsets.US_ASCII),
        of(response).getBytes(StandardCharsets.US_ASCII));
  }

  /** Length-prefixed, so that no two different responses feed the digest the same bytes. */
  private static void part(MessageDigest sha, String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    sha.update(ByteBuffer.allocate(4).putInt(bytes.length).array());
    sha.update(bytes);
  }
}
