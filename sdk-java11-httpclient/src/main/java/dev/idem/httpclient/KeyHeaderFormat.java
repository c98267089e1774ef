package dev.idem.httpclient;

import dev.idem.core.IdempotencyKey;

/**
 * How the idempotency key is written into its header. Servers differ: most (Stripe, Adyen, the
 * reference server) expect the bare token, while the IETF draft defines the header as a
 * structured-field string, which is quoted.
 */
public enum KeyHeaderFormat {
  /** The key as is: {@code Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324}. The default. */
  BARE,
  /**
   * An RFC 8941 structured-field string, as in the IETF draft:
   * {@code Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"}; a {@code "} or {@code \} in an
   * app-supplied key is escaped with a backslash.
   */
  STRUCTURED_STRING;

  /** Renders {@code key} as a header value in this format. */
  public String format(IdempotencyKey key) {
    String v = key.value();
    if (this == BARE) {
      return v;
    }
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
}
