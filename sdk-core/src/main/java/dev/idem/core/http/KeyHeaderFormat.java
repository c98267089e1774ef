package dev.idem.core.http;

import dev.idem.core.IdempotencyKey;

/**
 * How the idempotency key is written into its header, shared by every HTTP adapter. Servers
 * differ: most (Stripe, Adyen, the reference server) expect the bare token, while the IETF draft
 * defines the header as a structured-field string, which is quoted.
 */
public enum KeyHeaderFormat {
  /** The key as is: {@code Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324}. The default. */
  BARE {
    @Override
    public String format(IdempotencyKey key) {
      return key.value();
    }
  },
  /**
   * An RFC 8941 structured-field string, as in the IETF idempotency-key draft:
   * {@code Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"}. Backslashes and double quotes
   * in the key are escaped.
   */
  STRUCTURED_STRING {
    @Override
    public String format(IdempotencyKey key) {
      String v = key.value();
      StringBuilder sb = new StringBuilder(v.length() + 2).append('"');
      for (int i = 0; i < v.length(); i++) {
        char c = v.charAt(i);
        if (c == '"' || c == '\\') {
          sb.append('\\');
        }
        sb.append(c);
      }
      return sb.append('"').toString();
    }
  };

  /**
   * Returns the header value for a key.
   *
   * @param key the key
   * @return the value to send
   */
  public abstract String format(IdempotencyKey key);

  /**
   * Reads a key from a header value in either format: a quoted structured-field string is
   * unquoted, anything else is taken as a bare key.
   *
   * @param headerValue the header value
   * @return the key
   * @throws IllegalArgumentException if the value is not a valid key
   */
  public static IdempotencyKey parse(String headerValue) {
    String v = headerValue.trim();
    if (v.length() >= 2 && v.charAt(0) == '"' && v.charAt(v.length() - 1) == '"') {
      StringBuilder sb = new StringBuilder(v.length());
      for (int i = 1; i < v.length() - 1; i++) {
        char c = v.charAt(i);
        if (c == '\\' && i + 1 < v.length() - 1) {
          c = v.charAt(++i);
        }
        sb.append(c);
      }
      v = sb.toString();
    }
    return IdempotencyKey.of(v);
  }
}
