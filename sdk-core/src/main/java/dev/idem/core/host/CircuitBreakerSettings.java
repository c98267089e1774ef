package dev.idem.core.host;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.internal.Checks;
import java.time.Duration;

/**
 * Settings of the circuit breaker that Idem keeps per target host (built on
 * resilience4j-circuitbreaker). While a host's breaker is open, its operations are not attempted.
 * An inline call ({@link IdempotentExecutor#execute}, {@code executeAsync}) waits for the
 * half-open probe if its deadline leaves time for it (and, while the probes are out, looks again
 * every second). Otherwise the operation stays PENDING, due when the breaker may let a probe
 * through, for a deliverer (an {@code OutboxDispatcher}, or {@link IdempotentExecutor#resumePending})
 * to send with the same key; deliverers never wait on a breaker themselves, they come back on
 * their own schedule. An open breaker never makes an operation FAILED.
 *
 * <p>What counts: the breaker judges whether the host is reachable and serving, not whether the
 * idempotency protocol is doing its job.
 * <ul>
 *   <li>Failures: a request that never reached the host (connection refused, DNS, TLS handshake,
 *       connect timeout: the SAFE class), and 502, 503 and 504.</li>
 *   <li>Ignored (neither failure nor success): a keyed attempt that got no answer (read timeout,
 *       reset: the response may just be lost, and the keyed retry recovers it), the "key still in
 *       flight" answer (the server is working on it; two instances sharing a key see many), and
 *       other 5xx.</li>
 *   <li>Successes: 2xx, replays included, and every other answer (a 4xx shows the host is up).</li>
 * </ul>
 * How long an attempt took never counts: resilience4j's slow-call rule (by its defaults, a call
 * over 60 s is slow and a window of slow calls opens the breaker) is turned off, so a 2xx that
 * took minutes is a success like any other. A host too slow to answer within the client's read
 * timeout shows as unanswered attempts (ignored) or as 504s from a gateway (failures).
 *
 * <p>Defaults ({@link #ofDefaults()}), chosen for the low volumes that keyed writes usually have:
 * <ul>
 *   <li>opens when at least 50% of the last 20 counted attempts failed, and only once 10 were
 *       counted: ten refused connections or gateway errors in a short run are an outage, not bad
 *       luck, while a handful at low volume never trips it;</li>
 *   <li>stays open 10 s: long enough to shed load from a host that is down, short enough that an
 *       inline call with the default 60 s deadline waits for the probe instead of giving up;</li>
 *   <li>then lets 3 probes through: one lost probe does not keep the host shut for another period,
 *       and three is still no stampede.</li>
 * </ul>
 * Immutable and thread-safe.
 */
public final class CircuitBreakerSettings {
  /** The shortest open period resilience4j's breaker accepts. */
  private static final Duration MIN_OPEN_FOR = Duration.ofMillis(1);
  private static final CircuitBreakerSettings DEFAULTS = new Builder().build();
  private static final CircuitBreakerSettings DISABLED = new Builder().enabled(false).build();

  private final boolean enabled;
  private final float failureRatePercent;
  private final int slidingWindowSize;
  private final int minimumCalls;
  private final Duration openFor;
  private final int halfOpenProbes;

  private CircuitBreakerSettings(Builder b) {
    this.enabled = b.enabled;
    this.failureRatePercent = b.failureRatePercent;
    this.slidingWindowSize = b.slidingWindowSize;
    this.minimumCalls = b.minimumCalls;
    this.openFor = b.openFor;
    this.halfOpenProbes = b.halfOpenProbes;
  }

  /**
   * The defaults described above.
   *
   * @return the shared default settings, immutable
   */
  public static CircuitBreakerSettings ofDefaults() {
    return DEFAULTS;
  }

  /**
   * No circuit breaker at all.
   *
   * @return shared settings under which every host is always attempted
   */
  public static CircuitBreakerSettings disabled() {
    return DISABLED;
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
   * Whether breakers are used.
   *
   * @return true if breakers are used (the default)
   */
  public boolean enabled() {
    return enabled;
  }

  /**
   * The failure rate, in percent, at which a breaker opens.
   *
   * @return the failure rate threshold in (0, 100]; default 50
   */
  public float failureRatePercent() {
    return failureRatePercent;
  }

  /**
   * How many recent attempts the failure rate covers.
   *
   * @return the sliding window size, at least 1; default 20
   */
  public int slidingWindowSize() {
    return slidingWindowSize;
  }

  /**
   * How many attempts a breaker must see before it may open.
   *
   * @return the minimum number of counted attempts, at least 1; default 10
   */
  public int minimumCalls() {
    return minimumCalls;
  }

  /**
   * How long a breaker stays open before letting probes through.
   *
   * @return the open period, at least 1 ms; default 10 s
   */
  public Duration openFor() {
    return openFor;
  }

  /**
   * How many probes a half-open breaker lets through.
   *
   * @return the number of half-open probes, at least 1; default 3
   */
  public int halfOpenProbes() {
    return halfOpenProbes;
  }

  /** Builds {@link CircuitBreakerSettings}. Not thread-safe. */
  public static final class Builder {
    private boolean enabled = true;
    private float failureRatePercent = 50;
    private int slidingWindowSize = 20;
    private int minimumCalls = 10;
    private Duration openFor = Duration.ofSeconds(10);
    private int halfOpenProbes = 3;

    private Builder() {}

    /**
     * Whether breakers are used; default true.
     *
     * @param enabled false to attempt every host whatever its recent failures
     * @return this builder
     */
    public Builder enabled(boolean enabled) {
      this.enabled = enabled;
      return this;
    }

    /**
     * Sets the failure rate, in percent of the sliding window, that opens the breaker.
     *
     * @param percent failure rate that opens the breaker, in (0, 100]; default 50
     * @return this builder
     * @throws IllegalArgumentException if outside (0, 100]
     */
    public Builder failureRatePercent(float percent) {
      if (!(percent > 0 && percent <= 100)) {
        throw new IllegalArgumentException("failure rate must lie in (0, 100]: " + percent);
      }
      this.failureRatePercent = percent;
      return this;
    }

    /**
     * Sets how many recent attempts the sliding window holds.
     *
     * @param size attempts in the window, at least 1; default 20
     * @return this builder
     * @throws IllegalArgumentException if below 1
     */
    public Builder slidingWindowSize(int size) {
      this.slidingWindowSize = Checks.atLeastOne(size, "slidingWindowSize");
      return this;
    }

    /**
     * Sets how many attempts the breaker must see before it may open.
     *
     * @param calls attempts seen before the breaker may open, at least 1; default 10
     * @return this builder
     * @throws IllegalArgumentException if below 1
     */
    public Builder minimumCalls(int calls) {
      this.minimumCalls = Checks.atLeastOne(calls, "minimumCalls");
      return this;
    }

    /**
     * Sets how long the breaker stays open before it lets probes through.
     *
     * @param openFor how long the breaker stays open, at least 1 ms; default 10 s
     * @return this builder
     * @throws IllegalArgumentException if below 1 ms or above 100 years
     * @throws NullPointerException if {@code openFor} is null
     */
    public Builder openFor(Duration openFor) {
      Checks.positive(openFor, "openFor");
      // resilience4j refuses a shorter wait in the open state, and the per-host breaker is built
      // at the first attempt to a host, after the operation was claimed: refused here instead.
      if (openFor.compareTo(MIN_OPEN_FOR) < 0) {
        throw new IllegalArgumentException("openFor must be at least 1 ms: " + openFor);
      }
      this.openFor = openFor;
      return this;
    }

    /**
     * Sets how many probe attempts the half-open breaker lets through.
     *
     * @param probes attempts let through when half-open, at least 1; default 3
     * @return this builder
     * @throws IllegalArgumentException if below 1
     */
    public Builder halfOpenProbes(int probes) {
      this.halfOpenProbes = Checks.atLeastOne(probes, "halfOpenProbes");
      return this;
    }

    /**
     * Builds the settings.
     *
     * @return new immutable settings
     */
    public CircuitBreakerSettings build() {
      return new CircuitBreakerSettings(this);
    }
  }
}
