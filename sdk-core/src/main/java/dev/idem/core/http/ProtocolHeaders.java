package dev.idem.core.http;

/**
 * The names of the idempotency protocol's headers, defined once for the client, the server guard
 * and the test kit. HTTP header names are case-insensitive; these are the spellings Idem sends.
 */
public final class ProtocolHeaders {
  /**
   * {@value}: the key header of the IETF httpapi idempotency-key draft (and of Stripe, Adyen and
   * most APIs that take a key). The default of every adapter, of the guard and of the test kit's
   * server; its value is read by {@link KeyHeader#parse}.
   */
  public static final String KEY = "Idempotency-Key";

  /**
   * {@value}: {@code true} on a response that repeats a stored result instead of running the
   * operation again, as Stripe and the IETF draft name it. The guard sends it; the executor reads it.
   */
  public static final String REPLAYED = "Idempotent-Replayed";

  private ProtocolHeaders() {}
}
