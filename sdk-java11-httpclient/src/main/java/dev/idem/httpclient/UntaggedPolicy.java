package dev.idem.httpclient;

/**
 * What {@link IdempotentHttpClient#send} and {@code sendAsync} do with a POST or PATCH that was not
 * sent through {@link IdempotentHttpClient#operation(String)} and carries no key header of its own.
 * Requests with any other method, and requests that already carry the key header (the app manages
 * that key itself), always pass through untouched.
 */
public enum UntaggedPolicy {
  /**
   * Send it untouched: no key, no journal, no retry. The default, because a retried POST is safe
   * only when the server honours the key, which only the app knows endpoint by endpoint; and a key
   * made up for one {@code send} call would not survive the app's own retry of that call, nor a
   * restart, so it would look like protection without being it.
   */
  PASS_THROUGH,
  /**
   * Treat the call as a logical operation of its own, named {@code untagged-post} or
   * {@code untagged-patch} in the default scope, with a fresh random key: journaled, retried with
   * that key, and surfaced like a tagged call. Use it only when every POST and PATCH endpoint the
   * client talks to honours the key. A second {@code send} of the same request is a new operation.
   */
  FRESH_KEY,
  /**
   * Refuse it with {@link IllegalArgumentException} before anything is sent, so that a code path
   * that forgot to name its operation fails in tests instead of going out unprotected.
   */
  REJECT
}
