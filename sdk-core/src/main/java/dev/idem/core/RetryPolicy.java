package dev.idem.core;

import dev.idem.core.internal.Backoff;
import dev.idem.core.internal.Checks;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.RetryDecision;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.DoubleSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When and how often to retry: bounded by attempts and by an overall deadline, with exponential
 * backoff and jitter, and with a floor set by the server's {@code Retry-After}.
 *
 * <p>Defaults ({@link #ofDefaults()}):
 * <ul>
 *   <li>{@code maxAttempts} 5, counting the first attempt (the only count setting);</li>
 *   <li>{@code deadline} 60 s, measured from the first attempt of one execution;</li>
 *   <li>{@code baseDelay} 200 ms, {@code multiplier} 2.0, {@code maxDelay} 10 s;</li>
 *   <li>{@code jitter} {@link Jitter#FULL};</li>
 *   <li>{@code honorRetryAfter} true;</li>
 *   <li>{@code inFlightMinDelay} 1 s and {@code maxInFlightAttempts} 20 (see below).</li>
 * </ul>
 *
 * <p>A server's "this key is still in flight" answer (409 by default, see {@link ProtocolStatuses})
 * means the first request is still running, not that anything failed. Such answers do not count
 * against {@code maxAttempts}: they have their own budget, {@code maxInFlightAttempts}, and wait at
 * least {@code inFlightMinDelay}, growing by {@code multiplier} per in-flight answer (1 s, 2 s,
 * 4 s... up to {@code maxDelay}), or longer if Retry-After asks. The deadline bounds them as it
 * bounds everything.
 *
 * <p>{@code Retry-After} (delta-seconds or an HTTP-date) sets a floor on the next delay, capped at
 * {@code maxDelay}: a server that asks for more than {@code maxDelay} (even
 * {@code 99999999999999999999} seconds) is asked again after {@code maxDelay}. Retrying stops only
 * when that capped wait would end at or past the deadline. Unparseable or negative values are
 * ignored (the backoff applies); a date in the past means no extra wait.
 *
 * <p>{@link #decide} is a pure function of its arguments: the caller waits, so synchronous and
 * asynchronous execution share one algorithm. Immutable and thread-safe.
 */
public final class RetryPolicy {
  private static final Logger LOG = LoggerFactory.getLogger(RetryPolicy.class);
  private static final RetryPolicy DEFAULTS = new Builder().build();

  private final Settings s;

  private RetryPolicy(Builder b) {
    this.s = b.s.copy();
  }

  /**
   * The default policy described in the class comment.
   *
   * @return the shared default policy, immutable
   */
  public static RetryPolicy ofDefaults() {
    return DEFAULTS;
  }

  /**
   * A builder starting from the defaults.
   *
   * @return a new builder holding the defaults listed in the class comment
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A builder starting from this policy's settings.
   *
   * @return a new builder holding this policy's settings; this policy is not changed
   */
  public Builder toBuilder() {
    return new Builder(s.copy());
  }

  /**
   * Decides what follows a failed, retryable attempt.
   *
   * @param attemptsMade attempts made so far in this execution, at least 1
   * @param elapsed time since the first attempt of this execution started
   * @param previousDelay the delay chosen before the last attempt, {@link Duration#ZERO} if none
   * @param retryAfter the server's Retry-After hint, if any
   * @param random uniform values in [0, 1), for jitter
   * @return retry after a delay in [0, maxDelay] that ends before the deadline, or stop
   * @throws IllegalArgumentException if {@code random} gives a value outside [0, 1) when a delay is
   *     chosen
   */
  public RetryDecision decide(int attemptsMade, Duration elapsed, Duration previousDelay,
      Optional<Duration> retryAfter, DoubleSupplier random) {
    return decide(attemptsMade, elapsed, previousDelay, retryAfter, Optional.empty(), random);
  }

  /**
   * Decides what follows a failed, retryable attempt, letting a {@link DelayFunction} read the
   * response.
   *
   * @param attemptsMade attempts made so far in this execution, at least 1, not counting in-flight
   *     answers
   * @param elapsed time since the first attempt of this execution started
   * @param previousDelay the delay chosen before the last attempt, {@link Duration#ZERO} if none
   * @param retryAfter the server's Retry-After hint, if any
   * @param response the response of the attempt just made, if it got one
   * @param random uniform values in [0, 1), for jitter
   * @return retry after a delay in [0, maxDelay] that ends before the deadline, or stop
   * @throws IllegalArgumentException if {@code random} gives a value outside [0, 1) when a delay is
   *     chosen
   */
  public RetryDecision decide(int attemptsMade, Duration elapsed, Duration previousDelay,
      Optional<Duration> retryAfter, Optional<ResponseSnapshot> response, DoubleSupplier random) {
    return decide(attemptsMade, elapsed, previousDelay, retryAfter, response, Optional.empty(), random);
  }

  /**
   * Decides what follows a failed, retryable attempt, letting a {@link DelayFunction} read the
   * response, or the exception of an attempt that got none
   * ({@link DelayFunction#delay(int, Duration, double, Optional, Optional)}). The executor calls
   * this one.
   *
   * @param attemptsMade attempts made so far in this execution, at least 1, not counting in-flight
   *     answers
   * @param elapsed time since the first attempt of this execution started
   * @param previousDelay the delay chosen before the last attempt, {@link Duration#ZERO} if none
   * @param retryAfter the server's Retry-After hint, if any
   * @param response the response of the attempt just made, if it got one
   * @param failure the exception of the attempt just made, if it got no response
   * @param random uniform values in [0, 1), for jitter
   * @return retry after a delay in [0, maxDelay] that ends before the deadline, or stop
   * @throws IllegalArgumentException if {@code random} gives a value outside [0, 1) when a delay is
   *     chosen
   */
  public RetryDecision decide(int attemptsMade, Duration elapsed, Duration previousDelay,
      Optional<Duration> retryAfter, Optional<ResponseSnapshot> response, Optional<IOException> failure,
      DoubleSupplier random) {
    if (attemptsMade >= s.maxAttempts) {
      return RetryDecision.stop("attempts exhausted (" + attemptsMade + " of " + s.maxAttempts + ")");
    }
    return schedule(attemptsMade, elapsed, previousDelay, retryAfter, response, failure, random, 0, "");
  }

  /**
   * Decides what follows a server's "this key is still in flight" answer: wait at least
   * {@link #inFlightMinDelay()} times {@code multiplier^(inFlightAnswers - 1)} (capped at maxDelay),
   * or the backoff, the custom delay or Retry-After if longer; stop when
   * {@link #maxInFlightAttempts()} answers were in flight or the deadline would pass. Ordinary
   * {@code maxAttempts} does not apply.
   *
   * @param inFlightAnswers in-flight answers so far in this execution, at least 1
   * @param elapsed time since the first attempt of this execution started
   * @param previousDelay the delay chosen before the last attempt, {@link Duration#ZERO} if none
   * @param retryAfter the server's Retry-After hint, if any
   * @param response the in-flight response
   * @param random uniform values in [0, 1), for jitter
   * @return retry after a delay that ends before the deadline, or stop
   * @throws IllegalArgumentException if {@code random} gives a value outside [0, 1) when a delay is
   *     chosen
   */
  public RetryDecision decideInFlight(int inFlightAnswers, Duration elapsed, Duration previousDelay,
      Optional<Duration> retryAfter, Optional<ResponseSnapshot> response, DoubleSupplier random) {
    if (inFlightAnswers >= s.maxInFlightAttempts) {
      return RetryDecision.stop("in-flight attempts exhausted (" + inFlightAnswers + " of " + s.maxInFlightAttempts
          + ")");
    }
    long floor = Backoff.exponentialNanos(s.inFlightMinDelay.toNanos(), s.multiplier, s.maxDelay.toNanos(),
        inFlightAnswers);
    return schedule(inFlightAnswers, elapsed, previousDelay, retryAfter, response, Optional.empty(), random, floor,
        "key in flight, at least " + Duration.ofNanos(floor));
  }

  private RetryDecision schedule(int retry, Duration elapsed, Duration previousDelay, Optional<Duration> retryAfter,
      Optional<ResponseSnapshot> response, Optional<IOException> failure, DoubleSupplier random, long floorNanos,
      String floorReason) {
    Duration remaining = s.deadline.minus(elapsed);
    long nanos;
    String reason;
    Duration custom = null;
    String customFailed = null;
    if (s.delayFunction != null) {
      // Checked here, not in the function's guard below: a random source out of range is not the
      // function's fault, and the backoff would refuse the same value.
      double r = Backoff.unit(random.getAsDouble());
      try {
        custom = s.delayFunction.delay(retry, previousDelay, r, response, failure);
        if (custom == null || custom.isNegative()) {
          custom = Duration.ZERO;
        }
      } catch (RuntimeException e) {
        // The app's code (a header parsed that the server spelled otherwise, say): the policy's own
        // backoff decides this retry, and the attempt record says why.
        // The class only: its message may quote a response header the function parsed.
        LOG.warn("the custom delay function threw {}; the exponential backoff decides retry {} instead",
            e.getClass().getName(), retry);
        customFailed = e.getClass().getSimpleName();
      }
    }
    if (custom != null) {
      // Compared as durations first: the function may answer more than a long of nanoseconds holds.
      nanos = custom.compareTo(s.maxDelay) >= 0 ? s.maxDelay.toNanos() : custom.toNanos();
      reason = "custom delay function, retry " + retry;
    } else {
      nanos = Backoff.jitteredNanos(s.jitter, s.baseDelay.toNanos(), s.multiplier, s.maxDelay.toNanos(), retry,
          previousDelay.toNanos(), random.getAsDouble());
      reason = "backoff " + s.jitter + " jitter, retry " + retry
          + (customFailed == null ? "" : " (the custom delay function threw " + customFailed + ")");
    }
    if (floorNanos > nanos) {
      nanos = floorNanos;
      reason = floorReason;
    }
    if (s.honorRetryAfter && retryAfter.isPresent()) {
      Duration hint = retryAfter.get();
      // Capped at maxDelay first, then held against the deadline: a hint beyond maxDelay waits
      // maxDelay (the README's promise; the server's "later" is honoured as far as this policy
      // waits at all), and only a wait that would itself end past the deadline stops retrying.
      long hintFloor = Math.min(hint.toNanos(), s.maxDelay.toNanos());
      if (Duration.ofNanos(hintFloor).compareTo(remaining) >= 0) {
        return RetryDecision.stop("Retry-After " + hint + (hint.compareTo(s.maxDelay) > 0 ? " (capped at maxDelay "
            + s.maxDelay + ")" : "") + " lands past the deadline (" + (remaining.isNegative() ? Duration.ZERO : remaining)
            + " left)");
      }
      if (hintFloor > nanos) {
        nanos = hintFloor;
        reason = "Retry-After " + hint + (hint.compareTo(s.maxDelay) > 0 ? ", capped at maxDelay" : "");
      }
    }
    Duration delay = Duration.ofNanos(nanos);
    if (delay.compareTo(remaining) >= 0) {
      return RetryDecision.stop("deadline " + s.deadline + " reached (" + (remaining.isNegative() ? Duration.ZERO : remaining)
          + " left, next delay " + delay + ")");
    }
    return RetryDecision.retryAfter(delay, reason);
  }

  /**
   * Attempts allowed, counting the first.
   *
   * @return the attempt limit, at least 1; default 5
   */
  public int maxAttempts() {
    return s.maxAttempts;
  }

  /**
   * The overall deadline of one execution.
   *
   * @return the deadline, measured from the first attempt; default 60 s
   */
  public Duration deadline() {
    return s.deadline;
  }

  /**
   * The delay before the first retry, before jitter.
   *
   * @return the base delay; default 200 ms
   */
  public Duration baseDelay() {
    return s.baseDelay;
  }

  /**
   * The growth factor between retries.
   *
   * @return the multiplier, at least 1.0; default 2.0
   */
  public double multiplier() {
    return s.multiplier;
  }

  /**
   * The longest delay, after jitter and Retry-After.
   *
   * @return the cap on any delay; default 10 s
   */
  public Duration maxDelay() {
    return s.maxDelay;
  }

  /**
   * The jitter mode.
   *
   * @return the jitter mode; default {@link Jitter#FULL}
   */
  public Jitter jitter() {
    return s.jitter;
  }

  /**
   * Whether Retry-After sets a floor on the next delay.
   *
   * @return true if Retry-After is honoured (the default)
   */
  public boolean honorRetryAfter() {
    return s.honorRetryAfter;
  }

  /**
   * How long one attempt may take before it counts as an ambiguous timeout; empty (the default)
   * leaves it to the HTTP client's own timeouts. The asynchronous executor enforces it.
   *
   * @return the per-attempt timeout, or empty if none is set
   */
  public Optional<Duration> attemptTimeout() {
    return Optional.ofNullable(s.attemptTimeout);
  }

  /**
   * The least wait after an answer that the key is still in flight, before it grows by the
   * multiplier; default 1 s.
   *
   * @return the minimum in-flight delay
   */
  public Duration inFlightMinDelay() {
    return s.inFlightMinDelay;
  }

  /**
   * How many "still in flight" answers one execution waits through before giving up (UNCERTAIN);
   * default 20. They do not count against {@link #maxAttempts()}.
   *
   * @return the in-flight attempt budget
   */
  public int maxInFlightAttempts() {
    return s.maxInFlightAttempts;
  }

  /**
   * The custom backoff, if one replaces the exponential-with-jitter schedule.
   *
   * @return the delay function, or empty (the default) for exponential backoff with jitter
   */
  public Optional<DelayFunction> delayFunction() {
    return Optional.ofNullable(s.delayFunction);
  }

  @Override
  public String toString() {
    return "RetryPolicy{maxAttempts=" + s.maxAttempts + ", deadline=" + s.deadline + ", baseDelay=" + s.baseDelay
        + ", multiplier=" + s.multiplier + ", maxDelay=" + s.maxDelay + ", jitter=" + s.jitter
        + ", honorRetryAfter=" + s.honorRetryAfter + ", attemptTimeout=" + s.attemptTimeout
        + ", inFlightMinDelay=" + s.inFlightMinDelay + ", maxInFlightAttempts=" + s.maxInFlightAttempts
        + (s.delayFunction != null ? ", custom delay function" : "") + "}";
  }

  /** Builds a {@link RetryPolicy}; every setter validates at once. Not thread-safe. */
  public static final class Builder {
    private final Settings s;

    private Builder() {
      this(new Settings());
    }

    private Builder(Settings s) {
      this.s = s;
    }

    /**
     * Sets the least wait after a "key still in flight" answer, growing by the multiplier with each
     * such answer and capped at maxDelay.
     *
     * @param minDelay the least wait after a "key still in flight" answer, growing by the
     *     multiplier with each such answer and capped at maxDelay; positive; default 1 s
     * @return this builder
     * @throws IllegalArgumentException if zero, negative or above 100 years
     */
    public Builder inFlightMinDelay(Duration minDelay) {
      s.inFlightMinDelay = Checks.positive(minDelay, "inFlightMinDelay");
      return this;
    }

    /**
     * Sets how many "key still in flight" answers one execution waits through, apart from
     * maxAttempts.
     *
     * @param attempts how many "key still in flight" answers one execution waits through, apart
     *     from maxAttempts; at least 1; default 20
     * @return this builder
     * @throws IllegalArgumentException if below 1
     */
    public Builder maxInFlightAttempts(int attempts) {
      s.maxInFlightAttempts = Checks.atLeastOne(attempts, "maxInFlightAttempts");
      return this;
    }

    /**
     * Sets how long one attempt may take.
     *
     * @param timeout how long one attempt may take; positive; default none (the HTTP client's own
     *     timeouts apply)
     * @return this builder
     * @throws IllegalArgumentException if zero, negative or above 100 years
     */
    public Builder attemptTimeout(Duration timeout) {
      s.attemptTimeout = Checks.positive(timeout, "attemptTimeout");
      return this;
    }

    /**
     * Sets a custom backoff replacing baseDelay, multiplier and jitter.
     *
     * @param fn a custom backoff replacing baseDelay, multiplier and jitter; null (the default)
     *     restores them. Called on the threads that run attempts, so it must be thread-safe.
     * @return this builder
     */
    public Builder delayFunction(DelayFunction fn) {
      s.delayFunction = fn;
      return this;
    }

    /**
     * Sets how many attempts one execution may make, counting the first.
     *
     * @param maxAttempts attempts allowed, counting the first; 1 disables retries; default 5
     * @return this builder
     * @throws IllegalArgumentException if below 1
     */
    public Builder maxAttempts(int maxAttempts) {
      if (maxAttempts < 1) {
        throw new IllegalArgumentException("maxAttempts counts the first attempt and must be at least 1: " + maxAttempts);
      }
      s.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * Sets how long one execution may take, from its first attempt.
     *
     * @param deadline how long one execution may take, from its first attempt; positive; default 60
     *     s
     * @return this builder
     * @throws IllegalArgumentException if zero, negative or above 100 years
     */
    public Builder deadline(Duration deadline) {
      s.deadline = Checks.positive(deadline, "deadline");
      return this;
    }

    /**
     * Sets the delay before the first retry, before jitter.
     *
     * @param baseDelay the delay before the first retry, before jitter; positive; default 200 ms
     * @return this builder
     * @throws IllegalArgumentException if zero, negative or above 100 years
     */
    public Builder baseDelay(Duration baseDelay) {
      s.baseDelay = Checks.positive(baseDelay, "baseDelay");
      return this;
    }

    /**
     * Sets the growth factor, at least 1.0.
     *
     * @param multiplier the growth factor, at least 1.0; default 2.0
     * @return this builder
     * @throws IllegalArgumentException if below 1.0 or not finite
     */
    public Builder multiplier(double multiplier) {
      if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
        throw new IllegalArgumentException("multiplier must be a finite number of at least 1.0: " + multiplier);
      }
      s.multiplier = multiplier;
      return this;
    }

    /**
     * Sets the cap on any delay.
     *
     * @param maxDelay the cap on any delay; positive; default 10 s
     * @return this builder
     * @throws IllegalArgumentException if zero, negative or above 100 years
     */
    public Builder maxDelay(Duration maxDelay) {
      s.maxDelay = Checks.positive(maxDelay, "maxDelay");
      return this;
    }

    /**
     * Sets the jitter mode.
     *
     * @param jitter the jitter mode; default {@link Jitter#FULL}
     * @return this builder
     */
    public Builder jitter(Jitter jitter) {
      s.jitter = Objects.requireNonNull(jitter, "jitter");
      return this;
    }

    /**
     * Sets whether Retry-After sets a floor (capped at maxDelay) on the next delay.
     *
     * @param honor whether Retry-After sets a floor (capped at maxDelay) on the next delay; default true
     * @return this builder
     */
    public Builder honorRetryAfter(boolean honor) {
      s.honorRetryAfter = honor;
      return this;
    }

    /**
     * {@return the policy}
     *
     * @throws IllegalArgumentException if maxDelay is shorter than baseDelay
     */
    public RetryPolicy build() {
      if (s.maxDelay.compareTo(s.baseDelay) < 0) {
        throw new IllegalArgumentException("maxDelay " + s.maxDelay + " is shorter than baseDelay " + s.baseDelay);
      }
      return new RetryPolicy(this);
    }
  }

  /**
   * The settings, listed once for the policy and its builder: a builder writes its own copy, and a
   * policy keeps a copy that nothing writes after it is built.
   */
  private static final class Settings implements Cloneable {
    private int maxAttempts = 5;
    private Duration deadline = Duration.ofSeconds(60);
    private Duration baseDelay = Duration.ofMillis(200);
    private double multiplier = 2.0;
    private Duration maxDelay = Duration.ofSeconds(10);
    private Jitter jitter = Jitter.FULL;
    private boolean honorRetryAfter = true;
    private Duration attemptTimeout;
    private DelayFunction delayFunction;
    private Duration inFlightMinDelay = Duration.ofSeconds(1);
    private int maxInFlightAttempts = 20;

    Settings copy() {
      try {
        return (Settings) clone();
      } catch (CloneNotSupportedException e) {
        throw new AssertionError(e);
      }
    }
  }
}
