package dev.idem.okhttp.internal;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.spi.adapter.CaptureDeadline;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import dev.idem.core.spi.AttemptTimeoutException;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * Sends the attempts of a live call down the interceptor chain. Every attempt is the app's own
 * request (its headers, secrets included, and its tags, such as Retrofit's {@code Invocation})
 * with the buffered body and the key header, sent as exactly one request on the wire
 * ({@link FollowUps}). Each response is snapshotted by
 * {@link ResponseCapture} (status, headers, at most a bounded prefix of the body) and its body is
 * left open: the final one streams to the caller through {@link LastResponse#responseFor}; any other is closed
 * before the next attempt (OkHttp requires that before an application interceptor may proceed
 * again) or by {@link LastResponse#release()}, unread beyond its prefix.
 *
 * <p>It remembers the last raw response, so the interceptor can hand the caller a response that
 * keeps its protocol, handshake and timings. One instance per intercepted call; the executor calls
 * it from one thread at a time.
 */
final class ChainTransport implements Transport {
  private final Interceptor.Chain chain;
  private final Request request;
  /** The body read once, sent by every attempt; null for a bodyless request. */
  private final RequestBody body;
  private final AdapterSupport settings;

  /** The policy's per-attempt timeout, or null. */
  private final Duration attemptTimeout;

  /** The response handed to the caller, and the one closed before the next attempt. */
  final LastResponse last;

  /**
   * @param chain the chain of the intercepted call
   * @param call the prepared call: the app's request and the body read once
   * @param attemptTimeout the retry policy's per-attempt timeout, or null for none. OkHttp does not
   *     heed the executor's interrupt while it reads a socket, so each attempt's read and write
   *     timeouts are lowered to it (connect keeps its own: a connect timeout provably sent nothing),
   *     and the body captured for the journal is read before it runs out.
   */
  ChainTransport(Interceptor.Chain chain, PreparedCall call, AdapterSupport settings, Duration attemptTimeout) {
    this.chain = chain;
    this.request = call.request();
    this.body = call.body();
    this.settings = settings;
    this.attemptTimeout = attemptTimeout;
    this.last = new LastResponse(request, true);
  }

  @Override
  public ResponseSnapshot send(RequestSnapshot snapshot, IdempotencyKey key) throws IOException {
    // The snapshot is the app's request, secrets included; sending that request instead keeps the
    // app's tags and header order. The attempt carries the call's result slot, so that the response
    // it receives can go to the caller as it is (see LastResponse#responseFor). A cancelled call
    // would fail every attempt at once without sending: report it as an interruption, so the
    // operation stays PENDING instead of burning its retries.
    last.release();
    if (chain.call().isCanceled()) {
      // Before anything of this attempt is written (a cancel, or the call timeout, during the
      // backoff): a request not sent, so it is not counted as an ambiguous attempt, which would
      // turn a later permanent refusal into UNCERTAIN. Its InterruptedIOException cause tells the
      // executor to stop and leave the operation PENDING.
      throw new RequestNotSentException("the OkHttp call was canceled (or its call timeout elapsed) before this"
          + " attempt was sent; the operation stays PENDING with its key", canceled());
    }
    KeyedAttempt tag = new KeyedAttempt(settings);
    Request attempt = FollowUps.keyed(request.newBuilder().header(settings.headerName(), settings.headerValue(key))
        .tag(Tags.CALL_RESULT, last.callResult), request.method(), body, tag);
    FollowUps.AttemptBody sent = (FollowUps.AttemptBody) attempt.body();
    Response raw;
    long started = System.nanoTime();
    Interceptor.Chain bounded = boundedChain();
    try {
      raw = FollowUps.proceed(bounded, attempt, tag);
    } catch (RequestNotSentException e) {
      checkNotCanceled(e, true);
      throw e;
    } catch (IOException e) {
      // As for a RuntimeException below: an interceptor under ours that fails before proceeding
      // (the one adding Authorization, when its token refresh fails) or a refused connection sent
      // nothing, and must not make the operation UNCERTAIN.
      RequestNotSentException notSent = FollowUps.notSent(sent, e);
      checkNotCanceled(e, notSent != null);
      if (notSent != null) {
        throw notSent;
      }
      if (attemptTimeout != null && e instanceof SocketTimeoutException
          && !"connect timed out".equalsIgnoreCase(e.getMessage())
          && System.nanoTime() - started >= attemptTimeout.toNanos()) {
        AttemptTimeoutException timedOut = new AttemptTimeoutException(attemptTimeout);
        timedOut.initCause(e);
        throw timedOut;
      }
      throw e;
    } catch (RuntimeException e) {
      // Where it happened decides what it means. Before the body was handed to the connection (an
      // interceptor below ours threw, say) the server cannot have seen the request: safe. After
      // it (OkHttp's RetryAndFollowUpInterceptor throws NumberFormatException on a Retry-After
      // beyond an int, once the response has arrived) the request went out: the executor makes
      // it an ambiguous attempt. A bodyless request cannot tell, so it counts as sent, as does one
      // with Expect: 100-continue (its head goes out before the body; see FollowUps.AttemptBody).
      RequestNotSentException notSent = FollowUps.notSent(sent, e);
      if (notSent != null) {
        throw notSent;
      }
      throw e;
    }
    // The status line and headers are in: from here on the attempt is answered, whatever becomes of
    // its body (see CaptureDeadline).
    ResponseSnapshot captured = ResponseCapture.capture(raw, CaptureDeadline.of(System.nanoTime(),
        millis(bounded.readTimeoutMillis()), started, attemptTimeout));
    last.remember(raw, captured);
    return captured;
  }

  private static Duration millis(int millis) {
    return millis <= 0 ? null : Duration.ofMillis(millis);
  }

  /** The chain with read and write timeouts no longer than the attempt timeout. */
  private Interceptor.Chain boundedChain() {
    if (attemptTimeout == null) {
      return chain;
    }
    int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, attemptTimeout.toMillis()));
    Interceptor.Chain bounded = chain;
    if (chain.readTimeoutMillis() == 0 || chain.readTimeoutMillis() > millis) {
      bounded = bounded.withReadTimeout(millis, TimeUnit.MILLISECONDS);
    }
    if (chain.writeTimeoutMillis() == 0 || chain.writeTimeoutMillis() > millis) {
      bounded = bounded.withWriteTimeout(millis, TimeUnit.MILLISECONDS);
    }
    return bounded;
  }

  /**
   * If the call was canceled, stops the execution (PENDING) with the cancel. {@code notSent}: nothing
   * of this attempt was written, so the cancel is wrapped in RequestNotSentException, which keeps
   * the attempt out of the journal; a plain InterruptedIOException would record it as one that may
   * have taken effect, and a later permanent refusal would end UNCERTAIN.
   */
  private void checkNotCanceled(IOException cause, boolean notSent) throws IOException {
    if (chain.call().isCanceled()) {
      InterruptedIOException e = canceled();
      if (cause != null) {
        e.initCause(cause);
      }
      if (notSent) {
        throw new RequestNotSentException("the OkHttp call was canceled (or its call timeout elapsed) before this"
            + " attempt was written; the operation stays PENDING with its key", e);
      }
      throw e;
    }
  }

  /** Exactly InterruptedIOException: the executor reads that class as "stop, leave it PENDING". */
  private static InterruptedIOException canceled() {
    return new InterruptedIOException("the OkHttp call was canceled (or its call timeout elapsed); the operation"
        + " stays PENDING with its key");
  }
}
