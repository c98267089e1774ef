package dev.idem.okhttp.internal;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.okhttp.IdempotencyResult;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The last response of a live call's attempts, for both live transports ({@link ChainTransport},
 * {@link LiveCallTransport}): the caller gets the raw response its outcome was captured from, which
 * keeps its protocol, handshake, timings and live body (the captured prefix, then the rest as it
 * arrives); any other response is closed unread beyond its prefix, before the next attempt (OkHttp
 * requires that) or when the call ends without handing it over. Thread-safe: an enqueued call's
 * attempts end on OkHttp's threads while the caller may cancel.
 */
final class LastResponse {
  private final Request template;
  private final boolean keepAttemptRequest;
  /**
   * The result slot the attempts of a call that keeps their requests carry as a tag (see
   * {@link ChainTransport}), by which a received response reaches the caller without a copy.
   */
  final CallResult callResult = new CallResult();
  private Response raw;
  private ResponseSnapshot snapshot;
  /** The last response while its body is open and nobody took it over. */
  private Response unclaimed;

  /**
   * @param template the app's request, for a response this call did not receive itself
   * @param keepAttemptRequest whether a received response keeps the request of its attempt (the
   *     interceptor's chain), rather than the template (an enqueued call, whose attempts are calls of
   *     their own, tagged to pass the interceptor)
   */
  LastResponse(Request template, boolean keepAttemptRequest) {
    this.template = template;
    this.keepAttemptRequest = keepAttemptRequest;
  }

  /** Remembers the response an attempt's outcome was captured from; it stays open until handed over or released. */
  synchronized void remember(Response response, ResponseSnapshot captured) {
    raw = response;
    snapshot = captured;
    unclaimed = response;
  }

  /**
   * The response to hand the caller for {@code outcome}: the raw one it was captured from, or a
   * rebuilt one if this call did not receive it itself. The caller then owns the body and closes it.
   */
  synchronized Response responseFor(ResponseSnapshot outcome, IdempotencyResult result) {
    boolean received = raw != null && snapshot == outcome;
    if (received && keepAttemptRequest && raw.request().tag(Tags.CALL_RESULT) == callResult) {
      // The attempt's request carries this call's result slot: the response goes as it is.
      callResult.set(result);
      unclaimed = null;
      return raw;
    }
    Request request = (received && keepAttemptRequest ? raw.request() : template).newBuilder()
        .tag(Tags.RESULT, result)
        .build();
    if (received) {
      unclaimed = null;
      return raw.newBuilder().request(request).build();
    }
    return OkHttpSnapshots.toResponse(outcome, request);
  }

  /** Closes the last response unless {@link #responseFor} handed it to the caller. */
  void release() {
    Response open;
    synchronized (this) {
      open = unclaimed;
      unclaimed = null;
      if (open != null && open == raw) {
        // Its body is closed below: if a later outcome is still this response (a FAILED call whose
        // last attempts sent nothing), the caller gets it rebuilt from the capture, never a body
        // that is already closed.
        raw = null;
      }
    }
    if (open != null) {
      open.close();
    }
  }
}
