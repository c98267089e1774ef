package dev.idem.testkit.internal;

import java.util.Optional;

/** Where the dispatcher gets the fault, if any, for the request it is handling. */
@FunctionalInterface
public interface FaultSource {
  /**
   * Takes (consumes) the fault for one request. Must be thread-safe.
   *
   * @param key the request's unquoted idempotency key, or null if it had no valid one
   * @return the fault to apply, or empty for normal behaviour
   */
  Optional<FaultSpec> take(String key);
}
