package dev.idem.core.spi.adapter;

import dev.idem.core.spi.RequestSnapshot;
import java.time.Duration;

/**
 * How long one queued or resumed attempt may wait for its answer, the same in every adapter's
 * resume transport: the timeout its request was sent or queued with ({@link RequestSnapshot#timeout()},
 * kept in the journal); for a request that had none, the transport's own timeout if the app gave
 * it one; else the retry policy's {@code attemptTimeout}; else {@link #DEFAULT}. Never unbounded:
 * a queued delivery is driven by an outbox whose lane and lease wait on it, and an attempt to a
 * server that accepts the connection and never answers would otherwise hold them forever, never
 * retried with its key. Stateless and thread-safe.
 */
public final class AttemptBound {
  /**
   * The bound of an attempt nothing else bounds: 30 s, the read timeout Idem's other defaults use,
   * and half the retry policy's default 60 s deadline, so that an attempt that timed out still
   * leaves time for a retry with the same key.
   */
  public static final Duration DEFAULT = Duration.ofSeconds(30);

  private AttemptBound() {}

  /**
   * The bound of one attempt.
   *
   * @param request the journaled request
   * @param transportTimeout the transport's timeout for attempts whose request had none, or null
   * @param attemptTimeout the retry policy's {@code attemptTimeout}, or null
   * @return the first of those that is given, else {@link #DEFAULT}; never null
   */
  public static Duration of(RequestSnapshot request, Duration transportTimeout, Duration attemptTimeout) {
    return request.timeout().orElse(fallback(transportTimeout, attemptTimeout));
  }

  /**
   * The bound of an attempt whose request had no timeout of its own.
   *
   * @param transportTimeout the transport's timeout, or null
   * @param attemptTimeout the retry policy's {@code attemptTimeout}, or null
   * @return {@code transportTimeout}, else {@code attemptTimeout}, else {@link #DEFAULT}; never null
   */
  public static Duration fallback(Duration transportTimeout, Duration attemptTimeout) {
    return transportTimeout != null ? transportTimeout : attemptTimeout != null ? attemptTimeout : DEFAULT;
  }
}
