package dev.idem.core.outbox;

import dev.idem.core.AsyncTransport;
import dev.idem.core.OperationException;
import dev.idem.core.Outcome;
import java.util.function.Consumer;

/**
 * How the dispatcher delivers the operations of one name: the transport (a synchronous one is
 * already wrapped onto the worker pool) and the optional outcome callbacks.
 *
 * @param transport sends one attempt, re-applying the secrets kept out of the journal
 * @param onSuccess called when an operation of this name SUCCEEDED through this dispatcher
 * @param onFailure called when one ended FAILED or UNCERTAIN through this dispatcher
 */
record Registration(AsyncTransport transport, Consumer<Outcome> onSuccess,
    Consumer<OperationException> onFailure) {}
