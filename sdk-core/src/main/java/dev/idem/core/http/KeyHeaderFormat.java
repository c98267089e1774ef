package dev.idem.core.http;

import dev.idem.core.IdempotencyKey;
import java.util.List;

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
   * {@code Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"}. No key needs an escape (a key
   * has no double quote and no backslash: {@link KeyHeader}).
   */
  STRUCTURED_STRING {
    @Override
    public String format(IdempotencyKey key) {
      return '"' + key.value() + '"';
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
   * Reads a key from a header value in either format, by the one rule of {@link KeyHeader}.
   *
   * @param headerValue the header value (one field line)
   * @return the key
   * @throws IllegalArgumentException if the value is not a valid key in either format; the message
   *     says why, never the value
   */
  public static IdempotencyKey parse(String headerValue) {
    KeyHeader parsed = KeyHeader.parse(List.of(headerValue));
    return parsed.key().orElseThrow(() -> new IllegalArgumentException(
        "the key header has " + parsed.problem().orElseThrow()));
  }
}
