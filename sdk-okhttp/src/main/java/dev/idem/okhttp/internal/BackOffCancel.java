package dev.idem.okhttp.internal;

import dev.idem.core.spi.adapter.AdapterSupport;
import okhttp3.Call;
import okhttp3.EventListener;

/**
 * Ends the backoff of an intercepted call when the call is canceled or its call timeout elapses.
 * OkHttp's cancel (which its call timeout calls) cuts the attempt on the wire, but the
 * interceptor's thread waiting between attempts would sleep out the whole backoff, a server's
 * {@code Retry-After: 60} included, before the call could fail. Added to the call as an event
 * listener, it hears the cancel and tells the executor ({@link AdapterSupport#cancelBackOff}),
 * which wakes that thread if it is waiting and skips any later wait; the next attempt is then
 * refused by {@link ChainTransport} as not sent, so the operation stays PENDING with its key.
 *
 * <p>One per intercepted call. Thread-safe: the cancel comes from any thread (OkHttp's watchdog
 * for a call timeout); after {@link #close()} it does nothing, so a cancel after the call returned
 * (while the caller reads the body) never reaches the thread's later calls.
 */
final class BackOffCancel extends EventListener implements AutoCloseable {
  private final AdapterSupport support;
  private final Thread thread;
  private boolean closed;  // guarded by this
  /** Whether this call told the executor of a cancel, which close then takes back; guarded by this. */
  private boolean told;

  private BackOffCancel(AdapterSupport support, Thread thread) {
    this.support = support;
    this.thread = thread;
  }

  /**
   * Listens to {@code call}, which runs on the current thread, until {@link #close()}.
   *
   * @return the listener, to close once the executor returned
   */
  static BackOffCancel listen(Call call, AdapterSupport support) {
    BackOffCancel listener = new BackOffCancel(support, Thread.currentThread());
    call.addEventListener(listener);
    if (call.isCanceled()) {
      // Canceled before the listener was added: no event will come. (Both may run: harmless.)
      listener.canceled(call);
    }
    return listener;
  }

  @Override
  public synchronized void canceled(Call call) {
    if (!closed) {
      told = true;
      support.cancelBackOff(thread);
    }
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      // Only a call that was cancelled has anything to take back: the executor's bookkeeping is
      // under its one lifecycle lock, which every call of every thread would otherwise take.
      if (told) {
        support.clearBackOffCancel(thread);
      }
    }
  }
}
