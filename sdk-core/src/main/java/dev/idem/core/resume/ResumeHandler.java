package dev.idem.core.resume;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.Outcome;
import dev.idem.core.spi.Transport;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * What the app does with the operations of one name that {@link IdempotentExecutor#resumePending}
 * finds in the journal after a restart: how to send them (a transport that re-applies the secrets
 * kept out of the journal, such as Authorization) and where their outcomes go.
 *
 * <p>Register one per operation name at startup. Callbacks run on the thread that calls
 * {@code resumePending} (or on its resume threads, one call at a time, with
 * {@link IdempotentExecutor.Builder#resumeConcurrency}); they should not throw: an exception is
 * logged, the resume goes on, and the outcome does not count as received (below).
 *
 * <h2>Each outcome is handed over once, as far as the journal can tell</h2>
 * When a callback returns normally with the outcome of a terminal operation, the executor records in
 * the journal that the outcome was delivered ({@link dev.idem.core.spi.Journal#recordOutcomeDelivered}),
 * so a later {@code resumePending}, in this process or after a restart, does not call the handler
 * for it again. And {@code resumePending} first hands over what the journal still owes: the
 * outcome of a queued operation ({@link IdempotentExecutor#enqueue}, an outbox submission) that
 * ended without any handler or outbox awaiter being recorded as having received it, because the
 * process stopped between the terminal write and the callback, or the callback threw. Nothing is
 * sent for those; they are counted in the summary like resumed ones. An operation begun inline
 * ({@code execute}) is never handed over this way: its caller was told.
 *
 * <p>Exactly once cannot hold everywhere: if the process dies after a callback returned and
 * before the journal made the record durable (a crash, a kill -9, or a normal exit of a journal
 * that is not closed, on a journal that defers the record), the next {@code resumePending} hands
 * the same outcome again. A crash that loses an operation's SUCCEEDED write can likewise make it
 * be sent again after the callback ran (the server replays it). A handler whose effect must not
 * happen twice (confirming an order, say) should therefore deduplicate on the operation's
 * identity, {@link Outcome#operationId()} or {@link OperationException#operationId()} (its key is
 * unique per operation). What says "this may be a repeat":
 * <ul>
 *   <li>{@link Outcome#fromJournal()}: nothing was sent now, the outcome is the one the journal
 *       held (always so for an outcome handed over again);</li>
 *   <li>{@link Outcome#replayed()}: the server answered with its stored response to an earlier
 *       attempt with this key;</li>
 *   <li>{@link OperationFailedException#fromJournal()} and
 *       {@link OperationUncertainException#fromJournal()} for endings read from the journal.</li>
 * </ul>
 * A server that does not mark its replays leaves only the identity to go by.
 */
public interface ResumeHandler {
  /**
   * Sends a journaled snapshot, re-applying secret headers. Asked for by {@code resumePending}
   * once per operation it is about to send. If it throws a RuntimeException or returns null, that
   * operation is not sent (it stays PENDING) and {@link #onFailure} gets an
   * {@link OperationPendingException} saying why; an Error ends the {@code resumePending} pass,
   * with that operation PENDING and unsent.
   *
   * @return the transport for this operation name; it must re-apply the headers kept out of the
   *     journal
   */
  Transport transport();

  /**
   * Called with the outcome of a resumed operation that SUCCEEDED (possibly a server replay), or of
   * a queued one whose success the journal still owed a handler ({@link Outcome#fromJournal()}).
   *
   * @param outcome the outcome, with the response and the attempt history
   */
  void onSuccess(Outcome outcome);

  /**
   * Called when a resumed operation ended FAILED or UNCERTAIN, or is still PENDING (for example
   * owned by another process); or with the FAILED or UNCERTAIN ending the journal still owed a
   * handler ({@code fromJournal()} true). A PENDING one is not an outcome: it is neither recorded
   * as delivered nor owed, and the operation is resumed later.
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
