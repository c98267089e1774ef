package dev.idem.core.internal;

/**
 * The one definition of a key's characters, which {@link dev.idem.core.IdempotencyKey#of} and
 * {@link dev.idem.core.http.KeyHeader} both apply (why these characters: on {@code KeyHeader}).
 * Stateless.
 */
public final class KeySyntax {
  /** The longest key, in characters. */
  public static final int MAX_LENGTH = 255;

  private KeySyntax() {}

  /**
   * Why {@code value} is not a key, as a phrase that follows "has" ("an empty key", "a comma at
   * index 2"), or null if it is one. Never echoes the value: a malformed key may be anything.
   */
  public static String problem(String value) {
    if (value.isEmpty()) {
      return "an empty key";
    }
    if (value.length() > MAX_LENGTH) {
      return value.length() + " characters, over the " + MAX_LENGTH + " a key may have";
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == ',') {
        return "a comma (U+002C) at index " + i;
      }
      if (c == '"') {
        return "a double quote (U+0022) at index " + i;
      }
      if (c == '\\') {
        return "a backslash (U+005C) at index " + i;
      }
      if (c < 0x21 || c > 0x7e) {
        return String.format("a character outside visible ASCII (U+%04X) at index %d", (int) c, i);
      }
    }
    return null;
  }
}
