package dev.idem.okhttp.internal;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.spi.adapter.AttemptBound;
import dev.idem.core.spi.adapter.CaptureDeadline;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Sends journaled snapshots through the app's own {@link OkHttpClient}, for operations the executor
 * drives outside a live call (resumed after a restart, or re-driven). Going through the app's
 * client, not a bare one, is the point: its interceptors re-apply Authorization and the other
 * secrets that were kept out of the journal, and its timeouts, proxy and TLS settings apply.
 *
 * <p>Each attempt is tagged {@link ResumeAttempt}, so the idempotency interceptor lets it through
 * instead of starting a new operation, as one request on the wire ({@link FollowUps}). The client
 * gets the interceptor and the {@link FollowUpGuard} added if it lacks them (a copy, sharing its
 * connection pool and dispatcher). A response's body is read for the journal under a
 * {@link CaptureDeadline} (the client's read timeout for the whole captured body, and the
 * executor's default attempt timeout), then closed.
 *
 * <p>Every attempt is bounded. A snapshot that kept its request's own timeout (one journaled by
 * the java.net.http adapter, {@link RequestSnapshot#timeout()}) gets it as the call's timeout.
 * Otherwise the client's timeouts apply (OkHttp's default 10 s read timeout bounds a server that
 * never answers), unless the client has neither a read nor a call timeout and the retry policy no
 * {@code attemptTimeout}: then the call gets {@link #DEFAULT_TIMEOUT}, since an attempt that waits
 * without end would hold its outbox lane and lease forever, never retried with its key.
 * Thread-safe.
 */
public final class ClientTransport implements Transport, AsyncTransport {
  private final OkHttpClient client;
  private final AdapterSupport settings;
  private final Duration attemptTimeout;

  /**
   * The call timeout of an attempt nothing else bounds: {@link AttemptBound#DEFAULT}, as every
   * adapter's resume transport.
   */
  static final Duration DEFAULT_TIMEOUT = AttemptBound.DEFAULT;

  /**
   * @param client the app's client
   * @param settings the adapter's rules
   * @param idem the adapter's application interceptor
   */
  public ClientTransport(OkHttpClient client, AdapterSupport settings, Interceptor idem) {
    this.client = FollowUpGuard.installedIn(client, idem);
    this.settings = settings;
    this.attemptTimeout = settings.executor().retryPolicy().attemptTimeout().orElse(null);
  }

  @Override
  public ResponseSnapshot send(RequestSnapshot request, IdempotencyKey key) throws IOException {
    long started = System.nanoTime();
    Call call;
    try {
      call = newCall(request, key);
    } catch (RuntimeException e) {
      throw FollowUps.notBuilt(e);
    }
    Duration bound = bound(request, call);
    Response response;
    try {
      response = call.execute();
    } catch (RequestNotSentException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      // An interceptor above Idem's (added before install) that failed before proceeding wrote
      // nothing; below it, FollowUps has decided already, except for a canceled call, which it
      // leaves to its caller. Here that is this attempt's own call timeout (nothing else cancels a
      // resumed attempt's call): OkHttp's plain InterruptedIOException("timeout"). Before the body
      // was written it is a request not sent, as CallFutures makes it on the asynchronous path (the
      // executor then stops and leaves the operation PENDING, with no attempt that may have taken
      // effect); once writing started, or for an attempt with Expect: 100-continue (its head may
      // have been acted on already), refuse() says so and the attempt stays ambiguous.
      RequestNotSentException notSent = FollowUps.notSent(
          call.request().body() instanceof FollowUps.AttemptBody b ? b : null, e);
      if (notSent != null) {
        throw notSent;
      }
      throw e;
    }
    return capture(response, started, bound);
  }

  @Override
  public CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key) {
    long started = System.nanoTime();
    Call call;
    try {
      call = newCall(request, key);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(FollowUps.notBuilt(e));
    }
    Duration bound = bound(request, call);
    return CallFutures.enqueue(call, response -> capture(response, started, bound));
  }

  /**
   * Sets the call's timeout where the class comment says one is needed.
   *
   * @return the call timeout set, or null if the client's own timeouts bound the attempt
   */
  private Duration bound(RequestSnapshot request, Call call) {
    Duration bound = request.timeout().orElse(null);
    if (bound == null && client.readTimeoutMillis() <= 0 && client.callTimeoutMillis() <= 0 && attemptTimeout == null) {
      bound = DEFAULT_TIMEOUT;
    }
    if (bound != null) {
      call.timeout().timeout(bound.toNanos(), TimeUnit.NANOSECONDS);
    }
    return bound;
  }

  private ResponseSnapshot capture(Response response, long started, Duration bound) {
    Duration read = client.readTimeoutMillis() <= 0 ? null : Duration.ofMillis(client.readTimeoutMillis());
    // A call timeout counts from the call's start, as an attempt timeout does: the body read for
    // the journal stops just before it would cut the connection.
    Duration whole = bound == null ? attemptTimeout
        : attemptTimeout == null || bound.compareTo(attemptTimeout) < 0 ? bound : attemptTimeout;
    return ResponseCapture.captureAndClose(response, CaptureDeadline.of(System.nanoTime(), read, started, whole));
  }

  /**
   * The attempt's OkHttp call.
   *
   * @throws RuntimeException if OkHttp cannot carry the journaled request ({@link OkHttpSnapshots#toRequest});
   *     the callers report it as a request not sent
   */
  private Call newCall(RequestSnapshot request, IdempotencyKey key) {
    Request r = OkHttpSnapshots.toRequest(request);
    Request.Builder b = r.newBuilder()
        .header(settings.headerName(), settings.headerValue(key))
        .tag(Tags.RESUME_ATTEMPT, ResumeAttempt.INSTANCE);
    // One KeyedAttempt per OkHttp call (see LiveCallTransport): an app interceptor above Idem
    // that calls proceed again cannot put a second request of this attempt on the wire.
    return client.newCall(FollowUps.keyed(b, r.method(), r.body(), new KeyedAttempt(settings)));
  }
}
