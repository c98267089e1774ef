package dev.idem.server.internal;

import java.nio.charset.StandardCharsets;

/** RFC 9457 problem documents, the error format of the IETF idempotency draft. */
public final class Problems {
  /** The media type of a problem document. */
  public static final String MEDIA_TYPE = "application/problem+json";
  /** The prefix of every problem type the guard sends. */
  public static final String TYPE_PREFIX = "urn:idem:problem:";

  private Problems() {}

  /**
   * A problem document.
   *
   * @param status the HTTP status
   * @param type the last part of the problem type URI
   * @param title a short human summary
   * @param detail a human explanation of this occurrence
   * @return the JSON bytes
   */
  public static byte[] json(int status, String type, String title, String detail) {
    String json = "{\"type\":" + quote(TYPE_PREFIX + type) + ",\"title\":" + quote(title)
        + ",\"status\":" + status + ",\"detail\":" + quote(detail) + "}";
    return json.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * A JSON string literal.
   *
   * @param s the text
   * @return {@code s} quoted and escaped
   */
  public static String quote(String s) {
    StringBuilder out = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }
}
