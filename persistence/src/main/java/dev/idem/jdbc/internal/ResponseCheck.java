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
    Sum sum = new Sum();
    sum.status(response.path("status").asText());
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
      sum.bodyLength(response.path("bodyLength").asText());
    } else {
      sum.body(response.path("body").asText());
    }
    return sum.hex();
  }

  /**
   * The checksum fed value by value, in the document's order: {@link #of} over a document read
   * back, and the encoder as it writes one (so that it need not build the document to sum it).
   * Not thread-safe; one per document.
   */
  static final class Sum {
    private static final byte[] STATUS = ascii("status:");
    private static final byte[] HEADER = ascii("header:");
    private static final byte[] VALUE = ascii("value:");
    private static final byte[] BODY_LENGTH = ascii("bodyLength:");
    private static final byte[] BODY = ascii("body:");

    private final MessageDigest sha = RequestCheck.sha256();

    void status(String status) {
      part(STATUS, status);
    }

    void header(String name) {
      part(HEADER, name);
    }

    /** One value of the header last named; a null value is summed as the text "null", as it is read. */
    void value(String value) {
      part(VALUE, String.valueOf(value));
    }

    void bodyLength(String length) {
      part(BODY_LENGTH, length);
    }

    /** @param stored the body's stored (base64) text */
    void body(String stored) {
      part(BODY, stored);
    }

    /** The checksum as lower-case hex; ends this sum. */
    String hex() {
      return HexFormat.of().formatHex(sha.digest());
    }

    /**
     * Length-prefixed, so that no two different responses feed the digest the same bytes: the
     * length, then the bytes, of the UTF-8 text {@code label + text}.
     */
    private void part(byte[] label, String text) {
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      int length = label.length + bytes.length;
      sha.update((byte) (length >>> 24));
      sha.update((byte) (length >>> 16));
      sha.update((byte) (length >>> 8));
      sha.update((byte) length);
      sha.update(label);
      sha.update(bytes);
    }

    private static byte[] ascii(String s) {
      return s.getBytes(StandardCharsets.US_ASCII);
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
