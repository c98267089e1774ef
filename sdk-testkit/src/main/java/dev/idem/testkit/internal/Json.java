package dev.idem.testkit.internal;

/**
 * Writes JSON string literals. The server's bodies are a few fixed fields, so a JSON library would
 * be a dependency for one escape function.
 */
public final class Json {
  private Json() {}

  /** Returns {@code s} as a quoted, escaped JSON string. */
  public static String quote(String s) {
    StringBuilder out = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
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
