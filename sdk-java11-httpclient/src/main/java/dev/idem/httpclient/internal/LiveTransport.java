package dev.idem.httpclient.internal;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.spi.adapter.AdapterSupport;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.http.HttpRequest;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * The transport of one live call: every attempt is the caller's request (headers as the caller
 * spelled them, secrets included, timeout, version) with the captured body and the key header.
 * It remembers the last raw response, so that the caller gets the real request, URI, version and
 * TLS session of the attempt that produced the final response, not a reconstruction.
 *
 * <p>One instance per call; the executor uses it from one attempt at a time, and {@link #cancel}
 * may come from any thread.
 */
public final class LiveTransport implements Transport, AsyncTransport {
  private final AttemptSender sender;
  private final HttpRequest original;
  private final byte[] body;
  private final AdapterSupport support;
  private final AtomicReference<AttemptSender.Result> last = new AtomicReference<>();
  private final AtomicInteger sent = new AtomicInteger();

  /** Set once the call ended without handing a response over; see {@link #abandon}. */
  private volatile boolean abandoned;

  /** Guarded by this: set once the caller cancelled the call; see {@link #cancel}. */
  private boolean cancelled;
  /** Guarded by this: the future of the last attempt sent, which {@link #cancel} cancels. */
  private CompletableFuture<ResponseSnapshot> current;
  /** Guarded by this: set once the shutdown stopped the call; see {@link #stopped}. */
  private boolean stopped;
  /** Guarded by this: the attempt refused after the shutdown, held until {@link #stopped}. */
  private CompletableFuture<ResponseSnapshot> refusal;

  /** Whether the client was shut down; see {@link CallEngine#shutdown()}. */
  private final BooleanSupplier shutDown;
  /** The key the attempts carry, known once the executor began the operation. */
  private volatile IdempotencyKey key;

  /**
   * @param shutDown whether the Idem client was shut down: no attempt is sent after that
   */
  public LiveTransport(AttemptSender sender, HttpRequest original, byte[] body, AdapterSupport support,
      BooleanSupplier shutDown) {
    this.sender = sender;
    this.original = original;
    this.body = body;
    this.support = support;
    this.shutDown = shutDown;
  }

  @Override
  public ResponseSnapshot send(RequestSnapshot request, IdempotencyKey key) throws IOException {
    if (shutDown.getAsBoolean()) {
      // A blocking call that was waiting out a backoff: the shut-down client would refuse the
      // attempt, which the executor would count as one not sent and retry until the attempts ran
      // out (FAILED, for good). A plain InterruptedIOException is how a transport tells the
      // executor its caller stopped: the operation is left PENDING, this attempt not counted.
      InterruptedIOException stopped = new InterruptedIOException("the IdempotentHttpClient was shut down or closed");
      throw new RequestNotSentException("the IdempotentHttpClient was shut down or closed before this attempt was sent;"
          + " nothing was sent", stopped);
    }
    releaseUnclaimed();
    AttemptSender.Result r = sender.send(attempt(key));
    last.set(r);
    return r.snapshot();
  }

  @Override
  public CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key) {
    synchronized (this) {
      if (cancelled || stopped) {
        // The executor passed its own check just before the cancel, or the shutdown's stop: both
        // cancelled its future first, so it records this attempt as the stopped call's (not
        // sent; the operation PENDING), and nothing goes out.
        return CompletableFuture.failedFuture(notSent());
      }
      if (shutDown.getAsBoolean()) {
        // Shut down, but this call's execution not cancelled yet (the shutdown is on its way to
        // it, or the executor is still starting it). Refused now, the attempt would count as one
        // not sent, to retry, and the last one would end the operation FAILED. Held until
        // stopped(), it is recorded as the stopped call's.
        if (refusal == null) {
          refusal = new CompletableFuture<>();
        }
        return refusal;
      }
    }
    releaseUnclaimed();
    HttpRequest attempt;
    try {
      attempt = attempt(key);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<ResponseSnapshot> sent = sender.sendAsync(attempt, r -> {
      last.set(r);
      if (abandoned) {
        r.release(); // arrived after the call ended without it: nobody will read its body
      }
    });
    boolean late;
    synchronized (this) {
      current = sent;
      late = cancelled;
    }
    if (late) {
      sent.cancel(true); // cancelled while this attempt was being handed to the JDK
    }
    return sent;
  }

  /**
   * The call's client was shut down and its execution's future cancelled (see
   * {@link CallEngine#shutdown()}): an attempt refused since the shutdown fails now as not sent,
   * and so does every later one. Call after cancelling the execution's future.
   */
  public void stopped() {
    CompletableFuture<ResponseSnapshot> held;
    synchronized (this) {
      stopped = true;
      held = refusal;
    }
    if (held != null) {
      held.completeExceptionally(notSent());
    }
  }

  private static RequestNotSentException notSent() {
    return new RequestNotSentException("the call was cancelled, or its client shut down, before this attempt was"
        + " sent; nothing was sent", new InterruptedIOException("the call was stopped"));
  }

  /**
   * The caller cancelled the call: cancels the attempt on the wire, if any (the JDK closes its
   * exchange, or Idem stops reading the body for the journal), and sends no later attempt; once
   * the operation settled, stops the final response's body, even if the caller's body handler
   * has it (as the JDK client's own cancel does).
   *
   * <p>The executor does not cancel an attempt when its caller's future is cancelled: it records
   * the attempt when it ends. Left alone, an attempt to a server that never answers would keep its
   * connection open, and the operation IN_FLIGHT rather than the PENDING its caller is promised,
   * for as long as the server likes. Cancel the executor's future first: the attempt this fails is
   * then recorded as the cancelled call's (ambiguous, the operation PENDING with its key), not as
   * a failed attempt to retry.
   */
  public void cancel() {
    CompletableFuture<ResponseSnapshot> attempt;
    CompletableFuture<ResponseSnapshot> held;
    synchronized (this) {
      cancelled = true;
      attempt = current;
      held = refusal;
    }
    if (attempt != null) {
      attempt.cancel(true);
    }
    if (held != null) {
      // Held for a shutdown's stop that may not come: the caller's cancel took the call out of
      // the shutdown's reach first. Its execution is cancelled already: not sent, PENDING.
      held.completeExceptionally(notSent());
    }
    AttemptSender.Result r = last.get();
    if (r != null) {
      r.cancel();
    }
  }

  /**
   * The attempt that produced {@code response}, if this call sent it; empty when the response came
   * from the journal or from another caller's execution of the same operation.
   */
  public AttemptSender.Result resultFor(ResponseSnapshot response) {
    AttemptSender.Result r = last.get();
    return r != null && r.live() && r.snapshot() == response ? r : null;
  }

  /**
   * Stops the last response's body unless it was handed to the caller: a retried attempt's body,
   * or the final one of a call that ends without handing it over, is never read further.
   */
  public void releaseUnclaimed() {
    AttemptSender.Result r = last.get();
    if (r != null) {
      r.release();
    }
  }

  /**
   * Ends a call that hands no response over (it failed, or its caller cancelled it): releases the
   * last response, and any that an attempt still on the wire brings later.
   */
  public void abandon() {
    abandoned = true;
    releaseUnclaimed();
  }

  /**
   * The operation's identity, once known: the key is derived by the executor for an operation
   * made {@code forReference}, and this transport learns it from the first attempt.
   *
   * @return the identity, or null if the key is derived and no attempt was made yet
   */
  public OperationId operationId(Operation op) {
    IdempotencyKey k = key;
    if (k != null) {
      return new OperationId(op.scope(), op.name(), k);
    }
    return op.keyFromReference() ? null : op.id();
  }

  /** How many attempts this call put on the wire. */
  public int attemptsSent() {
    return sent.get();
  }

  private HttpRequest attempt(IdempotencyKey key) {
    this.key = key;
    sent.incrementAndGet();
    return AttemptRequests.build(original.method(), original.uri(), original.headers().map(), body,
        AttemptRequests.Settings.of(original), support.headerName(), support.headerValue(key));
  }
}
