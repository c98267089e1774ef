package dev.idem.okhttp.internal;

import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.spi.adapter.CaptureDeadline;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.RequestNotSentException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import okhttp3.Call;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;

/**
 * Sends the attempts of one enqueued {@link IdemCall}, each as its own OkHttp call enqueued on the
 * app's client: the app's request (headers, secrets and tags such as Retrofit's
 * {@code Invocation}) with the buffered body and the key header, tagged {@link ResumeAttempt} so
 * that the idempotency interceptor lets it through, as one request on the wire ({@link FollowUps}). Between attempts no OkHttp call exists, so no
 * dispatcher thread or per-host slot is held while the executor's scheduler waits out a backoff.
 *
 * <p>Remembers the last raw response, so the caller gets one that keeps its protocol, handshake and
 * timings. One instance per enqueued call; the executor sends one attempt at a time.
 */
final class LiveCallTransport implements AsyncTransport {
  private final OkHttpClient client;
  private final Request request;
  /** The body read once, sent by every attempt; null for a bodyless request. */
  private final RequestBody body;
  private final AdapterSupport settings;
  private final List<EventListener> listeners;
  private final Duration attemptTimeout;

  private Call current;
  private boolean canceled;
  /** The response handed to the caller, and the one closed before the next attempt. */
  final LastResponse last;

  /**
   * @param attemptTimeout the operation's per-attempt timeout, or null: the executor's timer fails an
   *     attempt that has not answered by then, so the body captured for the journal is read before
   */
  LiveCallTransport(OkHttpClient client, PreparedCall call, AdapterSupport settings, List<EventListener> listeners,
      Duration attemptTimeout) {
    this.client = client;
    this.request = call.request();
    this.body = call.body();
    this.settings = settings;
    this.listeners = listeners;
    this.attemptTimeout = attemptTimeout;
    this.last = new LastResponse(request, false);
  }

  @Override
  public CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot snapshot, IdempotencyKey key) {
    Request.Builder b = request.newBuilder()
        .header(settings.headerName(), settings.headerValue(key))
        .tag(Tags.RESUME_ATTEMPT, ResumeAttempt.INSTANCE);
    // Its KeyedAttempt is made here, once per OkHttp call, not by the interceptor on each pass: an
    // app interceptor above Idem that retries (calls proceed again) must not get a second request
    // of this attempt onto the wire, and the shared tag lets FollowUpGuard refuse it.
    Request attempt = FollowUps.keyed(b, request.method(), body, new KeyedAttempt(settings));
    Call call = client.newCall(attempt);
    listeners.forEach(call::addEventListener);
    synchronized (this) {
      if (canceled) {
        // Cancelled before this attempt's call exists on the wire (the app's cancel or the call
        // timeout landed while the executor claimed it, or during a backoff): nothing was sent, so
        // the attempt must not be recorded as one that may have taken effect, which would turn a
        // later permanent refusal into UNCERTAIN.
        return CompletableFuture.failedFuture(stoppedBeforeSend("the OkHttp call was canceled (or its call timeout"
            + " elapsed)", null));
      }
      if (client.dispatcher().executorService().isShutdown()) {
        // The app shut its client down (during a backoff, say): the dispatcher refuses every
        // attempt before a byte is written. As a plain not-sent attempt each would be retried at
        // once until the attempts ran out, ending the operation FAILED for good although the
        // target could still take it; as the java.net.http adapter's stopped transport does, the
        // call stops instead and the operation stays PENDING with its key for a resume.
        return CompletableFuture.failedFuture(stoppedBeforeSend("the OkHttp client's dispatcher was shut down", null));
      }
      current = call;
    }
    // OkHttp needs each response closed; a retried attempt's body is never read further.
    last.release();
    long started = System.nanoTime();
    return CallFutures.enqueue(call, response -> {
      // Captured on OkHttp's thread, bounded by the journal's cap and by the capture deadline (the
      // outcome is decided from the status and headers, which are in); the rest of the body stays
      // on the wire for the caller. The journal work that follows runs on the executor's own
      // threads (see AsyncDriver).
      Duration read = client.readTimeoutMillis() <= 0 ? null : Duration.ofMillis(client.readTimeoutMillis());
      ResponseSnapshot captured = ResponseCapture.capture(response,
          CaptureDeadline.of(System.nanoTime(), read, started, attemptTimeout));
      last.remember(response, captured);
      boolean late;
      synchronized (LiveCallTransport.this) {
        late = canceled;
      }
      if (late) {
        last.release();
      }
      return captured;
    });
  }

  /**
   * An attempt refused before anything of it was sent because its call, or the client, stopped:
   * RequestNotSentException, so that it is not recorded as an attempt that may have taken effect,
   * caused by a plain InterruptedIOException, which tells the executor to stop and leave the
   * operation PENDING rather than retry (the convention ChainTransport and the java.net.http
   * adapter's LiveTransport follow).
   */
  static RequestNotSentException stoppedBeforeSend(String why, Throwable cause) {
    InterruptedIOException stopped = new InterruptedIOException(why + "; the operation stays PENDING with its key");
    if (cause != null) {
      stopped.initCause(cause);
    }
    return new RequestNotSentException(why + " before this attempt was sent; nothing was sent", stopped);
  }

  /** Cancels the attempt on the wire, if any, and every later one. */
  synchronized void cancel() {
    canceled = true;
    if (current != null) {
      current.cancel();
    }
  }
}
