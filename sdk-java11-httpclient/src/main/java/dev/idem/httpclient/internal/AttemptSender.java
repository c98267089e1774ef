package dev.idem.httpclient.internal;

import dev.idem.core.RequestNotSentException;
import dev.idem.core.ResponseSnapshot;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.ProtocolException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodySubscriber;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;

/**
 * Sends one attempt through the wrapped client and snapshots the response from its status, its
 * headers and at most a bounded prefix of its body ({@link ResponseRelay}); the body itself stays
 * at the wire, to be {@linkplain Result#attach handed} to the caller or
 * {@linkplain Result#release released}. It translates the JDK's failures into the transport
 * contract: a refused or timed-out connect, or any failure (an IOException or a RuntimeException)
 * before the client pulled a byte of the body, provably sent nothing and becomes
 * {@link RequestNotSentException} (SAFE, so exhaustion ends FAILED rather than UNCERTAIN, whatever
 * classifier the app installs); an interrupt becomes {@link InterruptedIOException}, which the
 * executor turns into a PENDING operation.
 */
public final class AttemptSender {
  private final HttpClient delegate;
  private final boolean forResume;

  /**
   * A sender for live calls: a response's body is kept at the wire for the caller.
   *
   * @param delegate the app's client
   */
  public AttemptSender(HttpClient delegate) {
    this(delegate, false);
  }

  private AttemptSender(HttpClient delegate, boolean forResume) {
    this.delegate = delegate;
    this.forResume = forResume;
  }

  /**
   * A sender for resumed operations, which nobody reads a body from: each response's body is read
   * up to the cap for the journal, then released.
   *
   * @param delegate the app's client
   * @return the sender
   */
  public static AttemptSender forResume(HttpClient delegate) {
    return new AttemptSender(delegate, true);
  }

  /** One attempt: its raw response (status, headers, version, TLS), its snapshot, and its body. */
  public record Result(HttpResponse<?> raw, ResponseSnapshot snapshot, ResponseRelay relay) {
    /** Stops this response's body unless it was handed over; reads nothing more of it. Idempotent. */
    public void release() {
      relay.discard();
    }

    /**
     * Hands this response's body to the caller's subscriber: the captured prefix, then the rest.
     *
     * @param subscriber the caller's handler's subscriber
     * @param <T> the body type
     * @return the subscriber's body
     */
    public <T> CompletableFuture<T> attach(BodySubscriber<T> subscriber) {
      return relay.attach(subscriber);
    }
  }

  /** Sends on the calling thread. */
  public Result send(HttpRequest attempt) throws IOException {
    PullTrackingPublisher[] tracker = new PullTrackingPublisher[1];
    HttpRequest tracked = PullTrackingPublisher.track(attempt, tracker);
    CompletableFuture<Result> result;
    try {
      result = capture(delegate.send(tracked, HttpResponse.BodyHandlers.ofPublisher()));
    } catch (InterruptedException e) {
      throw interrupted(e);
    } catch (IOException | RuntimeException e) {
      Exception classified = classify(e, tracker[0]);
      if (classified instanceof IOException io) {
        throw io;
      }
      throw (RuntimeException) classified;
    }
    try {
      return result.get();
    } catch (InterruptedException e) {
      result.thenAccept(Result::release);
      throw interrupted(e);
    } catch (ExecutionException e) {
      Throwable cause = unwrap(e);
      if (cause instanceof IOException io) {
        throw io;
      }
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IOException(cause);
    }
  }

  /** Sends without blocking; the future fails with an {@link IOException}. */
  public CompletableFuture<Result> sendAsync(HttpRequest attempt) {
    PullTrackingPublisher[] tracker = new PullTrackingPublisher[1];
    HttpRequest tracked;
    try {
      tracked = PullTrackingPublisher.track(attempt, tracker);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Result> out = new CompletableFuture<>();
    CompletableFuture<HttpResponse<Flow.Publisher<List<ByteBuffer>>>> sent;
    try {
      sent = delegate.sendAsync(tracked, HttpResponse.BodyHandlers.ofPublisher());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(classify(e, tracker[0]));
    }
    sent.whenComplete((r, error) -> {
      if (error == null) {
        CompletableFuture<Result> captured;
        try {
          captured = capture(r);
        } catch (IOException | RuntimeException e) {
          out.completeExceptionally(e);
          return;
        }
        captured.whenComplete((c, e) -> {
          if (e != null) {
            out.completeExceptionally(unwrap(e));
          } else if (!out.complete(c)) {
            c.release(); // cancelled meanwhile
          }
        });
        return;
      }
      Throwable cause = unwrap(error);
      out.completeExceptionally(cause instanceof IOException || cause instanceof RuntimeException
          ? classify((Exception) cause, tracker[0]) : cause);
    });
    return out;
  }

  private CompletableFuture<Result> capture(HttpResponse<Flow.Publisher<List<ByteBuffer>>> r) throws IOException {
    if (r.statusCode() < 100 || r.statusCode() > 599) {
      ResponseRelay unread = new ResponseRelay();
      r.body().subscribe(unread);
      unread.discard();
      throw new ProtocolException("HTTP status out of range: " + r.statusCode());
    }
    return ResponseRelay.capture(r, forResume).thenApply(c -> {
      Result result = new Result(r, c.snapshot(), c.relay());
      if (forResume) {
        result.release();
      }
      return result;
    });
  }

  private static InterruptedIOException interrupted(InterruptedException e) {
    Thread.currentThread().interrupt();
    InterruptedIOException io = new InterruptedIOException("interrupted while waiting for the response");
    io.initCause(e);
    return io;
  }

  /**
   * What a failure of the exchange means: nothing sent if the client could not connect, or failed
   * before it pulled a byte of the body; otherwise the failure itself, which the executor records
   * as an ambiguous attempt.
   */
  private static Exception classify(Exception e, PullTrackingPublisher tracker) {
    if (e instanceof ConnectException || e instanceof HttpConnectTimeoutException) {
      return new RequestNotSentException("could not connect (" + e.getClass().getSimpleName()
          + "); no byte of the request was sent", e);
    }
    if (tracker != null && !tracker.pulled() && !(e instanceof RequestNotSentException)) {
      return new RequestNotSentException("the HTTP client failed with " + e.getClass().getName()
          + " before it took any byte of the request body, so the server cannot have processed it", e);
    }
    return e;
  }

  static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
