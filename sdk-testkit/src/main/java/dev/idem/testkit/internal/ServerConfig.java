package dev.idem.testkit.internal;

import dev.idem.testkit.EffectHandler;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The settings of one server, already validated by the public builder.
 *
 * @param keyHeader the name of the idempotency key header
 * @param callerHeader the name of the header that names the caller
 * @param inFlightRetryAfter the {@code Retry-After} sent with a 409
 * @param keyRequiredMethods methods that get a 400 without a key, upper case
 * @param handler the business action
 * @param clock the source of "now" for HTTP-dates
 */
public record ServerConfig(
    String keyHeader,
    String callerHeader,
    Duration inFlightRetryAfter,
    Set<String> keyRequiredMethods,
    EffectHandler handler,
    Clock clock) {
  /** @throws NullPointerException if any component is null */
  public ServerConfig {
    Objects.requireNonNull(keyHeader, "keyHeader");
    Objects.requireNonNull(callerHeader, "callerHeader");
    Objects.requireNonNull(inFlightRetryAfter, "inFlightRetryAfter");
    keyRequiredMethods = keyRequiredMethods.stream()
        .map(m -> m.toUpperCase(Locale.ROOT))
        .collect(Collectors.toUnmodifiableSet());
    Objects.requireNonNull(handler, "handler");
    Objects.requireNonNull(clock, "clock");
  }
}
