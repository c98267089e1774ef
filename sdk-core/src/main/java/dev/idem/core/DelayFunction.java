package dev.idem.core;

import dev.idem.core.spi.ResponseSnapshot;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;

/**
 * A custom backoff, for teams whose schedule is not exponential-with-jitter (for example one
 * adapted from a resilience4j {@code IntervalFunction}). {@link RetryPolicy} still clamps the
 * result to [0, maxDelay], applies the Retry-After floor (and, for a key in flight,
 * {@link RetryPolicy#inFlightMinDelay()}) and stops at the deadline. If the function throws a
 * {@link RuntimeException}, the exception's class is logged (WARN) and the policy's own exponential
 * backoff decides that retry; the attempt's record says so. An {@link Error} is not caught there:
 * in the executor, the attempt that was sent is recorded, the operation goes back to PENDING with
 * its key (due after the policy's {@code maxDelay}) and the call throws
 * {@code OperationPendingException} with the Error as its cause (the JVM's own, such as
 * {@code OutOfMemoryError}, are thrown as they are); see "Your code that throws mid-call" in the
 * client guide.
 *
 * <p>To read the response when choosing a delay (a rate-limit header, say), implement
 * {@link WithResponse} instead; to read the exception of an attempt that got no response, override
 * {@link #delay(int, Duration, double, Optional, Optional)}. Implementations must be thread-safe and
 * must not block.
 */
@FunctionalInterface
public interface DelayFunction {
  /**
   * {@return the delay before this retry; null counts as zero}
   *
   * @param retry 1 for the first retry
   * @param previous the previous delay, {@link Duration#ZERO} before the first retry
   * @param random uniform in [0, 1), for jitter
   */
  Duration delay(int retry, Duration previous, double random);

  /**
   * The delay, knowing the response of the attempt just made. By default it ignores the response
   * and asks {@link #delay(int, Duration, double)}.
   *
   * @param retry 1 for the first retry
   * @param previous the previous delay, {@link Duration#ZERO} before the first retry
   * @param random uniform in [0, 1), for jitter
   * @param response the response of the attempt just made; empty if it got none
   * @return the delay before this retry; null counts as zero
   */
  default Duration delay(int retry, Duration previous, double random, Optional<ResponseSnapshot> response) {
    return delay(retry, previous, random);
  }

  /**
   * The delay, knowing how the attempt just made ended: its response, or the exception of an
   * attempt that got none. The policy calls this one, with what the executor decides on (the
   * decision's own arguments, never what an earlier attempt left behind); by default it ignores
   * the exception and asks {@link #delay(int, Duration, double, Optional)}.
   *
   * @param retry 1 for the first retry
   * @param previous the previous delay, {@link Duration#ZERO} before the first retry
   * @param random uniform in [0, 1), for jitter
   * @param response the response of the attempt just made; empty if it got none
   * @param failure the exception of the attempt just made, if it got no response; empty if it got
   *     one, or if whoever asked the policy did not say (see {@link RetryPolicy#decide(int, Duration,
   *     Duration, Optional, Optional, Optional, java.util.function.DoubleSupplier)})
   * @return the delay before this retry; null counts as zero
   */
  default Duration delay(int retry, Duration previous, double random, Optional<ResponseSnapshot> response,
      Optional<IOException> failure) {
    return delay(retry, previous, random, response);
  }

  /**
   * A {@link DelayFunction} that reads the response, written as one lambda:
   *
   * <pre>{@code
   * DelayFunction fn = (DelayFunction.WithResponse) (retry, previous, random, response) ->
   *     response.flatMap(r -> r.header("X-RateLimit-Reset-After"))
   *         .map(s -> Duration.ofMillis(new BigDecimal(s.trim()).movePointRight(3).longValue()))
   *         .orElse(Duration.ofMillis(200L << Math.min(retry, 10)));
   * }</pre>
   */
  @FunctionalInterface
  interface WithResponse extends DelayFunction {
    @Override
    Duration delay(int retry, Duration previous, double random, Optional<ResponseSnapshot> response);

    /** Without a response: asks the four-argument method with an empty one. */
    @Override
    default Duration delay(int retry, Duration previous, double random) {
      return delay(retry, previous, random, Optional.empty());
    }
  }
}
