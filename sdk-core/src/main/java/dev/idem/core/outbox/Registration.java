package dev.idem.core.outbox;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.OperationException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.Outcome;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the dispatcher delivers the operations of one name: the transport (a synchronous one is
 * already wrapped onto the worker pool) and the optional outcome callbacks.
 *
 * @param transport sends one attempt, re-applying the secrets kept out of the journal
 * @param onSuccess called when an operation of this name SUCCEEDED through this dispatcher, or
 *     with a success the journal still owes them; null if none was registered
 * @param onFailure called when one ended FAILED or UNCERTAIN through this dispatcher, or with such
 *     an ending the journal still owes them; null if none was registered
 */
record Registration(AsyncTransport transport, Consumer<Outcome> onSuccess,
    Consumer<OperationException> onFailure) {
  // Logged under the dispatcher's name, as before it was split out: log configuration keys on it.
  private static final Logger LOG = LoggerFactory.getLogger(OutboxDispatcher.class);

  /** Whether outcome callbacks were registered for this name. */
  boolean hasCallbacks() {
    return onSuccess != null;
  }

  /**
   * Tells the callbacks, if any, how a delivery of {@code id} ended. A callback that throws is
   * logged and ignored: the journal already holds the operation's state, and one app bug must not
   * stop the dispatcher.
   *
   * @param outcome the outcome if it SUCCEEDED, else null
   * @param cause why it did not succeed, when {@code outcome} is null; passed on as is if it is an
   *     {@link OperationException}, else wrapped in an {@link OperationFailedException}
   */
  void report(OperationId id, Outcome outcome, Throwable cause) {
    try {
      if (outcome != null) {
        if (onSuccess != null) {
          onSuccess.accept(outcome);
        }
      } else if (onFailure != null) {
        OperationException failure = cause instanceof OperationException oe ? oe
            : new OperationFailedException(cause.getMessage(), cause, id, List.of(), null);
        onFailure.accept(failure);
      }
    } catch (RuntimeException e) {
      LOG.error("an OutboxDispatcher outcome callback threw; the operation's state in the journal is unaffected", e);
    }
  }
}
