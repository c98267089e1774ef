package dev.idem.core.spi.adapter;

import dev.idem.core.internal.CallMark;
import dev.idem.core.internal.ExecutorLifecycle;

/**
 * The cancel of one synchronous call to the executor, for an adapter whose HTTP client cancels a
 * call without interrupting its thread (OkHttp's {@code Call.cancel()} and call timeout cut the
 * attempt on the wire, but not a thread that waits between attempts). Taken with
 * {@link AdapterSupport#callCancel()} on the thread that then calls the executor
 * ({@link dev.idem.core.IdempotentExecutor#execute} or {@code resume}), and closed once that call
 * has returned.
 *
 * <p>{@link #cancel()} ends the call's waits: a backoff under way ends at once (an interrupt of
 * that wait only, which the executor clears before the call returns, keeping one the app sent in
 * the same wait), a later one is skipped, and
 * a wait for a concurrent execution of the same operation in this process ends with an
 * {@link dev.idem.core.OperationPendingException} (that execution goes on). The call's thread is
 * never interrupted while it sends or writes the journal. The executor then goes on to the next
 * attempt, which the call's transport must refuse, as for a call cancelled before it: a
 * {@link dev.idem.core.spi.RequestNotSentException} caused by an
 * {@link java.io.InterruptedIOException}, so that the operation stays PENDING with its key and
 * nothing more is sent.
 *
 * <p>It belongs to that one call: another call made on the same thread while it runs (its
 * transport's, an interceptor fetching a token through the same client) is not cancelled with it,
 * nor is one made after it, nor one made between taking it and calling the executor (a body
 * handler or an interceptor that makes a keyed call through another client on the same executor,
 * with a handle of its own: the handle taken last on a thread names the call that starts next
 * there), and closing it takes back no other handle's cancel.
 *
 * <p>Taking and closing one that was never cancelled takes no lock. Thread-safe: {@link #cancel()}
 * may come from any thread, any number of times; after {@link #close()} it does nothing. Close it
 * on the thread that took it.
 */
public final class CallCancel implements AutoCloseable {
  private final ExecutorLifecycle lifecycle;
  private final CallMark mark;
  private boolean closed;  // guarded by this

  CallCancel(ExecutorLifecycle lifecycle) {
    this.lifecycle = lifecycle;
    this.mark = lifecycle.markNextCall();
  }

  /** Cancels the call: see the class comment. Does nothing once closed. */
  public synchronized void cancel() {
    if (!closed) {
      lifecycle.cancelCall(mark);
    }
  }

  /** The call has returned: a later cancel does nothing. Idempotent. */
  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      // Nothing to take back under the executor's lock, which every call of every thread would
      // otherwise take: the cancel was this call's own mark's, which no later call takes.
      lifecycle.release(mark);
    }
  }
}
