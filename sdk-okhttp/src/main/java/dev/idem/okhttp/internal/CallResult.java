package dev.idem.okhttp.internal;

import dev.idem.okhttp.IdempotencyResult;

/**
 * The {@link IdempotencyResult} of one live call, carried as a tag by every attempt request the
 * interceptor sends, and set once the call settles. OkHttp's request tags are immutable, so
 * without it the result could only reach the caller on a copy of the response with a copy of its
 * request (two header copies and two builders per call); with it, the response an attempt
 * received goes to the caller as it is. Read through {@link IdempotencyResult#of}.
 *
 * <p>Thread-safe: set on the thread that settles the call, read on any.
 */
public final class CallResult {
  private volatile IdempotencyResult result;

  CallResult() {}

  /**
   * The result, once the call settled.
   *
   * @return the result, or null while the call runs (and for an attempt the caller never got)
   */
  public IdempotencyResult get() {
    return result;
  }

  void set(IdempotencyResult result) {
    this.result = result;
  }
}
