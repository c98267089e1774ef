package dev.idem.core;

import dev.idem.core.spi.Transport;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * What the app does with the operations of one name that {@link IdempotentExecutor#resumePending}
 * finds in the journal after a restart: how to send them (a transport that re-applies the secrets
 * kept out of the journal, such as Authorization) and where their outcomes go.
 *
 * <p>Register one per operation name at startup. Callbacks run on the thread that calls
 * {@code resumePending}; they must not throw (an exception is logged and the resume goes on).
 */
public interface ResumeHandler {
  /**
   * Sends a journaled snapshot, re-applying secret headers.
   *
   * @return the transport for this operation name; it must re-apply the headers kept out of the
   *     journal
   */
  Transport transport();

  /**
   * Called with the outcome of a resumed operation that SUCCEEDED (possibly a server replay).
   *
   * @param outcome the outcome, with the response and the attempt history
   */
  void onSuccess(Outcome outcome);

  /**
   * Called when a resumed operation ended FAILED or UNCERTAIN, or is still PENDING (for example
   * owned by another process).
   *
   * @param failure the ending: {@link OperationFailedException}, {@link
   *     OperationUncertainException}
   *     or {@link OperationPendingException}
   */
  void onFailure(OperationException failure);

  /**
   * A handler from a transport and two callbacks.
   *
   * @param transport sends a journaled snapshot, re-applying secrets
   * @param onSuccess receives successes
   * @param onFailure receives failures, uncertain and still-pending operations
   * @return a handler that forwards to the three arguments
   * @throws NullPointerException if any argument is null
   */
  static ResumeHandler of(Transport transport, Consumer<Outcome> onSuccess, Consumer<OperationException> onFailure) {
    Objects.requireNonNull(transport, "transport");
    Objects.requireNonNull(onSuccess, "onSuccess");
    Objects.requireNonNull(onFailure, "onFailure");
    return new ResumeHandler() {
      @Override
      public Transport transport() {
        return transport;
      }

      @Override
      public void onSuccess(Outcome outcome) {
        onSuccess.accept(outcome);
      }

      @Override
      public void onFailure(OperationException failure) {
        onFailure.accept(failure);
      }
    };
  }
}
