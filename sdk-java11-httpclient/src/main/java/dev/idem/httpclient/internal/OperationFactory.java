package dev.idem.httpclient.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.Operation;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.RequestSnapshot;
import java.util.List;
import java.util.Optional;

/**
 * Makes the operation of one call from its snapshot and the key header values found on the
 * caller's request, which the factory resolves with {@link dev.idem.core.spi.adapter.AdapterSupport#keyFor}.
 */
@FunctionalInterface
public interface OperationFactory {
  /**
   * @param snapshot the request, without its key header
   * @param keyHeaderValues the values of the key header on the caller's request, possibly empty
   * @return the operation
   * @throws IdempotencyException if the key header breaks the key-header rule
   */
  Operation make(RequestSnapshot snapshot, List<String> keyHeaderValues) throws IdempotencyException;

  /**
   * The retry policy of the operations this factory makes, if it sets one; known before the body
   * is read, which it bounds (see {@link CallEngine}).
   *
   * @return the policy, or empty for the executor's
   */
  default Optional<RetryPolicy> policy() {
    return Optional.empty();
  }
}
