package dev.idem.server.internal;

import java.util.List;
import java.util.Objects;

/**
 * The idempotency key of a request, read from its key header: absent, valid, or malformed.
 *
 * <p>Two spellings are accepted and mean the same key: a bare value ({@code abc-123}) and an RFC
 * 8941 structured-field string ({@code "abc-123"}), which is how the IETF draft writes the header.
 * Clients differ on this, and a server that told them apart would give the same logical operation
 * two identities.
 *
 * @param key the unquoted key; null unless {@link #isValid()}
 * @param problem why the header was refused; null unless malformed
 */
public record KeyParser(String key, String problem) {
  /** Longest key accepted, as in Idem's client and many production APIs. */
  public static final int MAX_LENGTH = 255;

  private static final KeyParser ABSENT = new KeyParser(null, null);

  /**
   * Reads the values of the key header.
   *
   * @param values every value of the header; empty means absent
   * @return the parsed key
   */
  public static KeyParser parse(List<String> values) {
    Objects.requireNonNull(values, "values");
    if (values.isEmpty()) {
      return ABSENT;
    }
    if (values.size() > 1) {
      return malformed("the header appears more than once");
    }
    String raw = values.get(0).trim();
    if (raw.startsWith("\"")) {
      return unquote(raw);
    }
    return check(raw);
  }

  /** @return true when the request carried no key header */
  public boolean isAbsent() {
    return key == null && problem == null;
  }

  /** @return true when the header held a usable key */
  public boolean isValid() {
    return key != null;
  }

  private static KeyParser unquote(String raw) {
    if (raw.length() < 2 || !raw.endsWith("\"")) {
      return malformed("an unterminated quoted string");
    }
    StringBuilder out = new StringBuilder(raw.length());
    for (int i = 1; i < raw.length() - 1; i++) {
      char c = raw.charAt(i);
      if (c == '\\') {
        if (i + 1 >= raw.length() - 1) {
          return malformed("a dangling escape");
        }
        char next = raw.charAt(++i);
        if (next != '"' && next != '\\') {
          return malformed("an invalid escape");
        }
        out.append(next);
      } else if (c == '"') {
        return malformed("an unescaped quote inside the string");
      } else {
        out.append(c);
      }
    }
    return check(out.toString());
  }

  private static KeyParser check(String key) {
    if (key.isEmpty()) {
      return malformed("an empty key");
    }
    if (key.length() > MAX_LENGTH) {
      return malformed("a key longer than " + MAX_LENGTH + " characters");
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      // Printable ASCII only: keys are opaque tokens, and anything else would be ambiguous once
      // it had gone through header folding or a proxy's charset guess.
      if (c < 0x20 || c > 0x7e) {
        return malformed("a character outside printable ASCII");
      }
    }
    return new KeyParser(key, null);
  }

  private static KeyParser malformed(String why) {
    return new KeyParser(null, why);
  }
}
