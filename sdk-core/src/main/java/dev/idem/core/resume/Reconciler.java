package dev.idem.core.resume;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import java.io.IOException;

/**
 * Settles UNCERTAIN operations by asking the server what really happened, for example with a GET
 * by the app's reference. See {@link IdempotentExecutor#reconcileUncertain(Reconciler)}.
 */
@FunctionalInterface
public interface Reconciler {
  /**
   * Finds out whether an UNCERTAIN operation took effect.
   *
   * @param uncertain the operation, with its key, reference, snapshot and attempts
   * @return what the server says: succeeded (with a response), failed, or still unknown
   * @throws IOException if the server could not be asked; the operation stays UNCERTAIN
   */
  Reconciliation reconcile(OperationRecord uncertain) throws IOException;
}
