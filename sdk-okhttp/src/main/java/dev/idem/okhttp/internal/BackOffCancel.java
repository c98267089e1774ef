package dev.idem.okhttp.internal;

import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.spi.adapter.CallCancel;
import okhttp3.Call;
import okhttp3.EventListener;

/**
 * Ends the waits of an intercepted call when the call is canceled or its call timeout elapses.
 * OkHttp's cancel (which its call timeout calls) cuts the attempt on the wire, but the
 * interceptor's thread waiting between attempts would sleep out the whole backoff, a server's
 * {@code Retry-After: 60} included, and a call waiting for a concurrent call of the same operation
 * would wait out that one's, before the call could fail. Added to the call as an event listener,
 * it hears the cancel and cancels the executor's call ({@link CallCancel}), which wakes it if it is
 * waiting and skips any later backoff; the next attempt is then refused by {@link ChainTransport}
 * as not sent, so the operation stays PENDING with its key. That cancel is this call's only: a
 * keyed call an interceptor makes on the same thread while this one is on the wire keeps its
 * backoff.
 *
 * <p>One per intercepted call. Thread-safe: the cancel comes from any thread (OkHttp's watchdog
 * for a call timeout); after {@link #close()} it does nothing, so a cancel after the call returned
 * (while the caller reads the body) never reaches the thread's later calls.
 */
final class BackOffCancel extends EventListener implements AutoCloseable {
  private final CallCancel cancel;

  private BackOffCancel(CallCancel cancel) {
    this.cancel = cancel;
  }

  /**
   * Listens to {@code call}, whose executor call is made next on the current thread, until
   * {@link #close()}.
   *
   * @return the listener, to close once the executor returned
   * @throws RuntimeException what {@code call.addEventListener} throws (a {@link Call} of another
   *     library's, say); the cancel is then closed, so no later call on this thread takes it
   */
  static BackOffCancel listen(Call call, AdapterSupport support) {
    BackOffCancel listener = new BackOffCancel(support.callCancel());
    try {
      call.addEventListener(listener);
    } catch (RuntimeException | Error e) {
      // The executor call it names will never be made: left taken, the mark would be the next
      // call's on this thread, and a cancel of this call (the listener may be registered anyway)
      // would reach that call.
      listener.close();
      throw e;
    }
    if (call.isCanceled()) {
      // Canceled before the listener was added: no event will come. (Both may run: harmless.)
      listener.canceled(call);
    }
    return listener;
  }

  @Override
  public void canceled(Call call) {
    cancel.cancel();
  }

  @Override
  public void close() {
    cancel.close();
  }
}
