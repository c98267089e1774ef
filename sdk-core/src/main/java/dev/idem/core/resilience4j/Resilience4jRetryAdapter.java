package dev.idem.core.resilience4j;

import dev.idem.core.Classifier;
import dev.idem.core.DelayFunction;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.RetryPolicy;
import dev.idem.core.Verdict;
import dev.idem.core.internal.DefaultClassifier;
import io.github.resilience4j.core.IntervalBiFunction;
import io.github.resilience4j.core.functions.Either;
import io.github.resilience4j.retry.RetryConfig;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a resilience4j {@link RetryConfig} into Idem's {@link RetryPolicy} and {@link Classifier},
 * so a team keeps the retry settings it already has while Idem adds the key, the journal and the
 * outcome states:
 *
 * <pre>{@code
 * Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(retryConfig);
 * IdempotentExecutor idem = IdempotentExecutor.builder()
 *     .retryPolicy(r4j.retryPolicy())
 *     .classifier(r4j.classifier())       // resilience4j's predicates first, then Idem's table
 *     .build();
 * }</pre>
 *
 * <table>
 *   <caption>What maps, and how</caption>
 *   <tr><th>resilience4j</th><th>Idem</th></tr>
 *   <tr><td>{@code maxAttempts} (counts the first call)</td><td>{@link RetryPolicy#maxAttempts()}, same
 *       meaning</td></tr>
 *   <tr><td>{@code intervalFunction} / {@code waitDuration}</td><td>a {@link DelayFunction}: retry n waits
 *       {@code intervalFunction.apply(n)} milliseconds</td></tr>
 *   <tr><td>{@code intervalBiFunction}</td><td>a {@link DelayFunction} that passes the failed attempt's
 *       exception ({@code Either.left}) or response ({@code Either.right}, a {@link ResponseSnapshot})</td></tr>
 *   <tr><td>{@code retryOnException}, {@code retryExceptions}, {@code ignoreExceptions}</td><td>an
 *       exception the predicate rejects is PERMANENT; one it accepts is left to the next classifier,
 *       which tells SAFE (never sent) from AMBIGUOUS (may have taken effect)</td></tr>
 *   <tr><td>{@code retryOnResult} (over {@link ResponseSnapshot})</td><td>a response it accepts is
 *       retried: AMBIGUOUS where {@link Classifier#defaults()} says it may follow the request's effect
 *       (2xx, 301, 302, 303, 409, 500, 502, 504, other 5xx but 501, 503 and 505), so that giving up
 *       after it ends UNCERTAIN, and TRANSIENT otherwise;
 *       any other response is left to the next classifier</td></tr>
 * </table>
 *
 * <p>What does not map, or maps differently:
 * <ul>
 *   <li>{@code failAfterMaxAttempts}: Idem never throws resilience4j's MaxRetriesExceeded; exhaustion
 *       ends FAILED, or UNCERTAIN if an attempt may have taken effect.</li>
 *   <li>{@code consumeResultBeforeRetryAttempt}, the Retry event publisher and registry: not called;
 *       use an {@code IdemListener} (RetryScheduled, AttemptFinished) or {@code MicrometerMetrics}.</li>
 *   <li>{@code writableStackTraceEnabled}: irrelevant.</li>
 *   <li>A response the result predicate does not match is not final: it goes to the next classifier
 *       (Idem's table retries 503, say). resilience4j's default has no result predicate at all, and
 *       HTTP clients report 5xx as results, so "not matched means final" would stop every retry.</li>
 *   <li>An exception the predicate rejects ends the operation, but UNCERTAIN rather than FAILED
 *       unless the request provably never left (Idem never reports failure while the effect may
 *       exist). Only {@link IOException}s reach the predicate: anything else from a transport is a
 *       bug, and leaves the operation PENDING.</li>
 *   <li>Delays are clamped to the base policy's {@code maxDelay} (default 10 s) and stop at its
 *       {@code deadline} (default 60 s), which resilience4j does not have; a server's Retry-After
 *       still sets a floor, and the retry budget and circuit breaker still apply. Pass a base policy
 *       to {@link #from(RetryConfig, RetryPolicy)} to change them.</li>
 *   <li>Randomized interval functions draw from resilience4j's own randomness, not from the
 *       executor's injected random, so they are not reproducible in tests.</li>
 * </ul>
 *
 * <p>Immutable and thread-safe. An {@code IntervalBiFunction} gets the attempt's response, or the
 * exception of an attempt that got none, with the policy's decision itself
 * ({@link DelayFunction#delay(int, Duration, double, Optional, Optional)}), whichever classifier
 * judged the attempt. Only a caller of {@link RetryPolicy#decide} that passes neither (the
 * executor always passes one) has the function receive {@code Either.left} of an
 * {@link IOException} saying the outcome is unknown.
 */
public final class Resilience4jRetryAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(Resilience4jRetryAdapter.class);

  private final RetryPolicy policy;
  private final Classifier predicates;

  @SuppressWarnings("unchecked")  // resilience4j types its result predicate loosely; a throw is caught in test()
  private Resilience4jRetryAdapter(RetryConfig config, RetryPolicy base) {
    this.predicates = new PredicateClassifier(config.getExceptionPredicate(),
        (Predicate<Object>) config.getResultPredicate());
    this.policy = base.toBuilder().maxAttempts(config.getMaxAttempts()).delayFunction(delays(config)).build();
  }

  /**
   * Adapts {@code config} on top of {@link RetryPolicy#ofDefaults()} (for the deadline, the maximum
   * delay and Retry-After handling).
   *
   * @param config the resilience4j retry configuration the team already uses
   * @return an immutable adapter
   * @throws IllegalArgumentException if the config's maxAttempts is below 1
   * @throws NullPointerException if {@code config} is null
   */
  public static Resilience4jRetryAdapter from(RetryConfig config) {
    return from(config, RetryPolicy.ofDefaults());
  }

  /**
   * Adapts {@code config} on top of {@code base}, whose deadline, maxDelay, honorRetryAfter and
   * attemptTimeout are kept; its maxAttempts and backoff are replaced by the config's.
   *
   * @param config the resilience4j retry configuration the team already uses
   * @param base the policy whose limits are kept
   * @return an immutable adapter
   * @throws IllegalArgumentException if the config's maxAttempts is below 1
   * @throws NullPointerException if either argument is null
   */
  public static Resilience4jRetryAdapter from(RetryConfig config, RetryPolicy base) {
    return new Resilience4jRetryAdapter(Objects.requireNonNull(config, "config"), Objects.requireNonNull(base, "base"));
  }

  /**
   * The retry policy: the config's maxAttempts and intervals, with the base policy's limits.
   *
   * @return the adapted policy, for {@code IdempotentExecutor.Builder#retryPolicy} or an
   *     operation's own
   */
  public RetryPolicy retryPolicy() {
    return policy;
  }

  /**
   * The config's predicates, then {@link Classifier#defaults()}.
   *
   * @return a classifier, usually used together with {@link #retryPolicy()}
   */
  public Classifier classifier() {
    return classifier(Classifier.defaults());
  }

  /**
   * The config's predicates, then {@code next} for whatever they leave open.
   *
   * @param next the classifier asked when the predicates leave a result open; it should always
   *     answer
   * @return a classifier, usually used together with {@link #retryPolicy()}
   */
  public Classifier classifier(Classifier next) {
    return predicates.orElse(next);
  }

  /**
   * resilience4j keeps every interval setting as an IntervalBiFunction (a plain IntervalFunction is
   * wrapped into one that ignores the outcome), so one path serves them all.
   */
  private DelayFunction delays(RetryConfig config) {
    return new Intervals(config.getIntervalBiFunction());
  }

  /**
   * The config's intervals as a delay function. The attempt's outcome comes with the decision
   * itself, never from a note kept per thread: such a note, made by this adapter's classifier, was
   * left for the next operation on the thread whenever a decision did not read it (an operation
   * with a policy of its own, a classifier placed before this one).
   */
  private record Intervals(IntervalBiFunction<ResponseSnapshot> bi) implements DelayFunction {
    @Override
    public Duration delay(int retry, Duration previous, double random) {
      return delay(retry, previous, random, Optional.empty(), Optional.empty());
    }

    @Override
    public Duration delay(int retry, Duration previous, double random, Optional<ResponseSnapshot> response) {
      return delay(retry, previous, random, response, Optional.empty());
    }

    @Override
    public Duration delay(int retry, Duration previous, double random, Optional<ResponseSnapshot> response,
        Optional<IOException> failure) {
      if (response.isPresent()) {
        return millis(bi.apply(retry, Either.right(response.get())));
      }
      Throwable thrown = failure.isPresent() ? failure.get()
          : new IOException("the outcome of the failed attempt is unknown to this delay function");
      return millis(bi.apply(retry, Either.left(thrown)));
    }
  }

  private static Duration millis(Long ms) {
    return ms == null || ms < 0 ? Duration.ZERO : Duration.ofMillis(ms);
  }

  /** resilience4j's predicates as a classifier that abstains whenever they allow a retry. */
  private record PredicateClassifier(Predicate<Throwable> retryOnException, Predicate<Object> retryOnResult)
      implements Classifier {

    @Override
    public Optional<Verdict> classify(ResponseSnapshot response) {
      if (retryOnResult == null || !test(retryOnResult, response, false)) {
        return Optional.empty();
      }
      String why = "resilience4j retryOnResult matched HTTP " + response.status();
      // Retrying is the predicate's call, but giving up after a response Idem's table says may follow
      // the request's effect must end UNCERTAIN, never FAILED: it is retried as AMBIGUOUS.
      return Optional.of(DefaultClassifier.mayFollowEffect(response)
          ? Verdict.ambiguous(why + "; it may have taken effect") : Verdict.transientFailure(why));
    }

    @Override
    public Optional<Verdict> classify(IOException failure) {
      if (retryOnException == null || test(retryOnException, failure, true)) {
        return Optional.empty();
      }
      return Optional.of(Verdict.permanent("resilience4j does not retry " + failure.getClass().getSimpleName()));
    }

    /**
     * A predicate that throws (say, one written for another result type) has no say: the answer
     * is {@code abstain}, which leaves the attempt to the next classifier.
     */
    private static <T> boolean test(Predicate<T> p, T value, boolean abstain) {
      try {
        return p.test(value);
      } catch (RuntimeException e) {
        LOG.warn("a resilience4j retry predicate threw {}; it has no say on this attempt (result predicates get a"
            + " dev.idem.core.spi.ResponseSnapshot)", e.getClass().getSimpleName());
        return abstain;
      }
    }
  }
}
