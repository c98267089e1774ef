package dev.idem.server;

/**
 * Which handler outcomes become the stored result of an operation, and which release the claim so
 * that a retry runs the handler again. Set it for the guard ({@link IdempotencyGuard.Builder#storagePolicy})
 * or per route ({@link RoutePolicy#storing}).
 *
 * <p>The case that decides between them: a handler that committed its effect and then answered
 * 500 (a failure after the commit, a bug in rendering the answer). If that 500 releases the claim,
 * the client's retry runs the handler again and the effect happens twice. The default therefore
 * stores every status except 503, which a handler sends to say "nothing was done, retry".
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
   * The default: every final status is stored and replayed except 503, which releases the claim.
   * A handler answers 503 (with {@code Retry-After}, say) when it did nothing and a retry may
   * succeed: a dependency down before any effect. Every other 5xx may follow an effect, so its
   * retry gets the stored answer instead of a second effect.
   */
  STORE_ALL_BUT_503,
  /**
   * 2xx, 3xx and 4xx are stored and replayed; every 5xx releases the claim (the IETF draft's
   * reading of "the work did not finish"). Only safe when no handler answers 5xx after its effect
   * has committed; the defaults before issue 27.
   */
  STORE_BELOW_500,
  /** Every final status is stored and replayed, 503 included, as some servers (Stripe) do. */
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
    };
  }
}
