package dev.idem.jdbc.internal;

import com.fasterxml.jackson.databind.JsonNode;
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
    Sum sum = new Sum(response.path("status").asText());
    JsonNode headers = response.get("headers");
    if (headers != null && headers.isObject()) {
      Iterator<Map.Entry<String, JsonNode>> it = headers.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> h = it.next();
        sum.header(h.getKey());
        for (JsonNode v : h.getValue()) {
          sum.value(v.asText());
        }
      }
    }
    if (response.path("bodyTruncated").asBoolean(false)) {
      return sum.bodyLength(response.path("bodyLength").asText());
    }
    return sum.body(response.path("body").asText());
  }

  /**
   * The checksum fed value by value, in stored order, as the encoder writes them: the same digest
   * as {@link #of} over the document it writes, without building a tree of it first.
   */
  static final class Sum {
    private final MessageDigest sha = RequestCheck.sha256();

    Sum(String status) {
      part("status:" + status);
    }

    void header(String name) {
      part("header:" + name);
    }

    void value(String value) {
      part("value:" + value);
    }

    String body(String base64) {
      part("body:" + base64);
      return HexFormat.of().formatHex(sha.digest());
    }

    String bodyLength(String length) {
      part("bodyLength:" + length);
      return HexFormat.of().formatHex(sha.digest());
    }

    /** Length-prefixed, so that no two different responses feed the digest the same bytes. */
    private void part(String text) {
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      int n = bytes.length;
      sha.update(new byte[] {(byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
      sha.update(bytes);
    }
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

}
