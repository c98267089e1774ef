package dev.idem.core.internal;

import dev.idem.core.CircuitBreakerSettings;
import dev.idem.core.Classification;
import dev.idem.core.IdemEvent;
import dev.idem.core.IdemListener;
import dev.idem.core.RetryBudget;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Guards each target host with a resilience4j circuit breaker and a {@link RetryBudget}: it
 * admits or refuses an attempt before it is sent, and learns from how it ended. Thread-safe.
 */
public final class HostGuard {
  /** Why an attempt may not be sent now. */
  public enum Refusal { NONE, BREAKER_OPEN, BUDGET_EMPTY }

  private final CircuitBreakerSettings settings;
  private final RetryBudget budget;
  private final Clock clock;
  private final IdemListener listener;
  private final ConcurrentHashMap<String, CircuitBreaker> breakers = new ConcurrentHashMap<>();

  public HostGuard(CircuitBreakerSettings settings, RetryBudget budget, Clock clock, IdemListener listener) {
    this.settings = settings;
    this.budget = budget;
    this.clock = clock;
    this.listener = listener;
  }

  /** The host key of a request URI: lower-case host and explicit port. */
  public static String hostOf(URI uri) {
    int port = uri.getPort();
    if (port < 0) {
      port = "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }
    String host = uri.getHost() == null ? String.valueOf(uri.getAuthority()) : uri.getHost();
    return host.toLowerCase(Locale.ROOT) + ":" + port;
  }

  /**
   * Asks whether an attempt to {@code host} may be sent now. A retry also needs the budget; if
   * the breaker admitted it but the budget refuses, the breaker's permission is given back.
   */
  public Refusal admit(String host, boolean isRetry) {
    CircuitBreaker breaker = breaker(host);
    if (breaker != null && !breaker.tryAcquirePermission()) {
      return Refusal.BREAKER_OPEN;
    }
    if (isRetry && !budget.tryAcquireRetry(host)) {
      if (breaker != null) {
        breaker.releasePermission();
      }
      return Refusal.BUDGET_EMPTY;
    }
    return Refusal.NONE;
  }

  /** Reports how an admitted attempt to {@code host} ended. */
  public void record(String host, Classification classification, Duration took) {
    if (classification == Classification.SUCCESS) {
      budget.onSuccess(host);
    }
    CircuitBreaker breaker = breaker(host);
    if (breaker == null) {
      return;
    }
    long nanos = Math.max(0, took.toNanos());
    switch (classification) {
      case SUCCESS, PERMANENT -> breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
      default -> breaker.onError(nanos, TimeUnit.NANOSECONDS, new IOException(classification.name()));
    }
  }

  /** Gives back a permission that was not used, for an attempt that was never sent. */
  public void release(String host) {
    CircuitBreaker breaker = breaker(host);
    if (breaker != null) {
      breaker.releasePermission();
    }
  }

  /** How long until an open breaker lets a probe through: the configured open period. */
  public Duration openFor() {
    return settings.openFor();
  }

  private CircuitBreaker breaker(String host) {
    if (!settings.enabled()) {
      return null;
    }
    return breakers.computeIfAbsent(host, this::newBreaker);
  }

  private CircuitBreaker newBreaker(String host) {
    CircuitBreakerConfig config = CircuitBreakerConfig.custom()
        .failureRateThreshold(settings.failureRatePercent())
        .slidingWindowSize(settings.slidingWindowSize())
        .minimumNumberOfCalls(settings.minimumCalls())
        .waitDurationInOpenState(settings.openFor())
        .permittedNumberOfCallsInHalfOpenState(settings.halfOpenProbes())
        .clock(clock)
        .build();
    CircuitBreaker breaker = CircuitBreaker.of("idem-" + host, config);
    breaker.getEventPublisher().onStateTransition(e -> listener.onEvent(new IdemEvent.BreakerStateChanged(host,
        e.getStateTransition().getFromState().name(), e.getStateTransition().getToState().name())));
    return breaker;
  }
}
