package dev.idem.okhttp;

/**
 * What the interceptor does with a POST or PATCH that carries no {@link IdempotentOperation} tag.
 * Requests with any other method and no tag always pass through untouched.
 */
public enum UntaggedPolicy {
  /**
   * Send it exactly as OkHttp would without Idem: no key, no journal, no retry. The default,
   * because the tag is the only sign that the server honours idempotency keys for this endpoint;
   * retrying a POST against a server that ignores the key could take effect twice. It also keeps
   * Idem from journaling request bodies the app never asked it to keep.
   */
  PASS_THROUGH,
  /**
   * Treat it as a logical operation of its own, with a fresh random key for this one call
   * (operation name {@code "untagged POST"} or {@code "untagged PATCH"}, the default scope). If the
   * request already carries the key header, that value is used as the key instead. Use it only for
   * a client that talks exclusively to servers that honour the key. The key does not survive a
   * second {@code execute()} of a new request, so app-level retries get a new key: tag the
   * request to control that.
   */
  FRESH_KEY
}
