package dev.idem.server;

/**
 * Which handler outcomes become the stored result of an operation, and which release the claim so
 * that a retry runs the handler again. Set it for the guard ({@link IdempotencyGuard.Builder#storagePolicy})
 * or per route ({@link RoutePolicy#storing}).
 *
 * <p>The case that decides between them: a handler that committed its effect and then answered
 * 500 (a failure after the commit, a bug in rendering the answer). If that 500 releases the claim,
 * the client's retry runs the handler again and the effect happens twice. The default
 * ({@link #STORE_ALL_BUT_TRANSIENT}) therefore stores every status except the four that say "this
 * request was not processed, retry": 408, 425, 429 and 503, the statuses Idem's own client
 * classifies as transient and retries ({@code dev.idem.core.Classifier#defaults()}).
 *
 * <p>In transactional mode ({@link IdempotencyGuard#inTransaction}) the policy decides the
 * transaction: a stored status commits together with the handler's writes, and a released one
 * rolls them back, so the answer and the effect commit together or not at all whatever the
 * policy.
 *
 * <p>Whatever the policy, a handler that throws releases its claim (in transactional mode its
 * transaction rolls back): to the guard, an exception means "the effect did not happen". A
 * handler that may throw after its effect has committed elsewhere should catch and answer instead.
 */
public enum StoragePolicy {
  /**
   * The default: every final status is stored and replayed except 408 Request Timeout, 425 Too
   * Early, 429 Too Many Requests and 503 Service Unavailable, which release the claim so that a
   * retry runs the handler again. Each says the request was not processed and may be retried (a
   * rate limiter inside the guarded chain, a dependency down before any effect), and Idem's client
   * retries exactly these as transient: stored, one 429 would be replayed to every retry for the
   * whole retention, and the operation would never go through. Answer one of them only before any
   * effect. Every other status, 500 included, may follow an effect, so its retry gets the stored
   * answer instead of a second effect. (The default was {@link #STORE_ALL_BUT_503} before.)
   */
  STORE_ALL_BUT_TRANSIENT,
  /**
   * Every final status is stored and replayed except 503, which releases the claim: a 429, 408 or
   * 425 is stored and replayed, without running the handler again, for the whole retention.
   *
   * @deprecated The default until 408, 425 and 429 were released too. Kept, with its old meaning,
   *     so that code that names it compiles and behaves as before; but at it a rate limit (429)
   *     inside the guarded chain burns the key, since Idem's client retries a 429 and is replayed it
   *     until it gives up. Use {@link #STORE_ALL_BUT_TRANSIENT} (the default), or {@link #STORE_ALL}
   *     where a handler may answer 429 after its effect.
   */
  @Deprecated
  STORE_ALL_BUT_503,
  /**
   * 2xx, 3xx and 4xx are stored and replayed; every 5xx releases the claim (the IETF draft's
   * reading of "the work did not finish"). Only safe when no handler answers 5xx after its effect
   * has committed; the defaults before issue 27.
   */
  STORE_BELOW_500,
  /** Every final status is stored and replayed, 408, 425, 429 and 503 included, as some servers (Stripe) do. */
  STORE_ALL;

  /**
   * Whether a response with this status is stored.
   *
   * @param status an HTTP status
   * @return true to store and replay it, false to release the claim
   */
  public boolean stores(int status) {
    return switch (this) {
      case STORE_ALL -> true;
      case STORE_BELOW_500 -> status < 500;
      case STORE_ALL_BUT_503 -> status != 503;
      // The statuses of the client's default table that say "not processed" (its TRANSIENT row).
      case STORE_ALL_BUT_TRANSIENT -> status != 408 && status != 425 && status != 429 && status != 503;
    };
  }
}
