package dev.idem.core.http;

/**
 * What an HTTP adapter does with a POST or PATCH that the app did not mark as a logical operation
 * (no operation tag, no operation call). Requests with any other method always pass through.
 * Shared by every adapter, which all apply it the same way
 * ({@link dev.idem.core.spi.adapter.AdapterSupport}): such an operation is named
 * {@code untagged-post} or {@code untagged-patch}, and {@link #REJECT} throws
 * {@link UntaggedRequestException}.
 */
public enum UntaggedPolicy {
  /**
   * Send it untouched: no key, no journal, no retry. The default, because a retried POST is safe
   * only when the server honours the key, which only the app knows endpoint by endpoint; and a key
   * made up for one call would not survive the app's own retry of that call, nor a restart, so it
   * would look like protection without being it. It also keeps Idem from journaling request
   * bodies the app never asked it to keep.
   */
  PASS_THROUGH,
  /**
   * Treat the call as a logical operation of its own, with a fresh random key: journaled, retried
   * with that key, and surfaced like a marked call. Use it only when every POST and PATCH endpoint
   * the client talks to honours the key. A second call with the same request is a new operation.
   */
  FRESH_KEY,
  /**
   * Refuse it before anything is sent, so that a code path that forgot to name its operation
   * fails in tests instead of going out unprotected.
   */
  REJECT
}
