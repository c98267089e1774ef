package dev.idem.server;

/**
 * Which handler outcomes become the stored result of an operation. Whatever the policy, a handler
 * that throws releases its claim, so that a retry runs it again.
 */
public enum StoragePolicy {
  /**
   * The default, from the IETF draft: 2xx, 3xx and 4xx are stored and replayed (a declined payment
   * stays declined); a 5xx releases the claim, because it says the work did not finish and a
   * retry may succeed.
   */
  STORE_BELOW_500,
  /** Every final status is stored and replayed, 5xx included, as some servers (Stripe) do. */
  STORE_ALL;

  /**
   * Whether a response with this status is stored.
   *
   * @param status an HTTP status
   * @return true to store and replay it, false to release the claim
   */
  public boolean stores(int status) {
    return this == STORE_ALL || status < 500;
  }
}
