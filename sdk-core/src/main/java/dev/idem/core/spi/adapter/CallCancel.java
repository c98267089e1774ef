package dev.idem.core.spi.adapter;

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
 * and a call made after it is not either.
 *
 * <p>Taking and closing one that was never cancelled takes no lock. Thread-safe: {@link #cancel()}
 * may come from any thread, any number of times; after {@link #close()} it does nothing.
 */
public final class CallCancel implements AutoCloseable {
  private final ExecutorLifecycle lifecycle;
  private final Thread thread;
  private final int depth;
  private boolean closed;  // guarded by this
  /** Whether the executor was told, which close then takes back; guarded by this. */
  private boolean told;

  CallCancel(ExecutorLifecycle lifecycle) {
    this.lifecycle = lifecycle;
    this.thread = Thread.currentThread();
    this.depth = lifecycle.nextSyncDepth();
  }

  /** Cancels the call: see the class comment. Does nothing once closed. */
  public synchronized void cancel() {
    if (!closed) {
      told = true;
      lifecycle.cancelCall(new ExecutorLifecycle.CallMark(thread, depth));
    }
  }

  /** The call has returned: a later cancel does nothing. Idempotent. */
  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      // Only a call that was cancelled has anything to take back: the executor keeps its marks
      // under its one lifecycle lock, which every call of every thread would otherwise take.
      if (told) {
        lifecycle.clearCancel(new ExecutorLifecycle.CallMark(thread, depth));
      }
    }
  }
}
