package dev.idem.httpclient.internal;

import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.adapter.CaptureDeadline;
import dev.idem.core.spi.adapter.SentBefore;
import dev.idem.core.spi.adapter.Settling;
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
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * Sends one attempt through the {@link KeyedClient} (the wrapped client, or its twin without
 * follow-ups: one request on the wire per attempt) and snapshots the response from its status, its
 * headers and at most a bounded prefix of its body, read under a {@link CaptureDeadline}
 * ({@link ResponseRelay}); the body itself stays
 * at the wire, to be {@linkplain Result#attach handed} to the caller or
 * {@linkplain Result#release released}. It translates the JDK's failures into the transport
 * contract: a refused or timed-out connect, or any failure (an IOException or a RuntimeException)
 * before the client began the request (asked the body's length for the head, or took a byte of
 * the body; of a request with a body and without {@code Expect: 100-continue}, see
 * {@link PullTrackingPublisher}), provably sent nothing and becomes
 * {@link RequestNotSentException} (SAFE, so exhaustion ends FAILED rather than UNCERTAIN, whatever
 * classifier the app installs); an interrupt becomes {@link InterruptedIOException}, which the
 * executor turns into a PENDING operation.
 */
public final class AttemptSender {
  private final KeyedClient client;
  private final boolean forResume;
  private final Duration attemptTimeout;

  /**
   * A sender for live calls: a response's body is kept at the wire for the caller.
   *
   * @param client the client keyed attempts go through
   * @param attemptTimeout the operation's per-attempt timeout, or null: the body read for the
   *     journal stops before it (see {@link CaptureDeadline})
   */
  public AttemptSender(KeyedClient client, Duration attemptTimeout) {
    this(client, false, attemptTimeout);
  }

  private AttemptSender(KeyedClient client, boolean forResume, Duration attemptTimeout) {
    this.client = client;
    this.forResume = forResume;
    this.attemptTimeout = attemptTimeout;
  }

  /**
   * A sender for resumed operations, which nobody reads a body from: each response's body is read
   * up to the cap for the journal, then released.
   *
   * @param client the client keyed attempts go through
   * @param attemptTimeout the executor's per-attempt timeout, or null
   * @return the sender
   */
  public static AttemptSender forResume(KeyedClient client, Duration attemptTimeout) {
    return new AttemptSender(client, true, attemptTimeout);
  }

  /**
   * One attempt: its raw response (status, headers, version, TLS), its snapshot, and its body; or,
   * for an answer the JDK client did not hand over (a server's 401 that Idem would not let it
   * re-send with credentials), the snapshot alone, with no raw response and no body.
   */
  public record Result(HttpResponse<?> raw, ResponseSnapshot snapshot, ResponseRelay relay) {
    /** An answer known only by its snapshot. */
    static Result answered(ResponseSnapshot snapshot) {
      return new Result(null, snapshot, null);
    }

    /** Whether the JDK client handed over this response, with a live body. */
    public boolean live() {
      return raw != null;
    }

    /** Stops this response's body unless it was handed over; reads nothing more of it. Idempotent. */
    public void release() {
      if (relay != null) {
        relay.discard();
      }
    }

    /**
     * Stops this response's body even if it was handed over: its caller stopped waiting for what
     * its subscriber makes of it. Idempotent.
     */
    public void cancel() {
      if (relay != null) {
        relay.cancel();
      }
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

  /**
   * Sends on the calling thread. Once the status line and headers are in, the attempt is answered:
   * an interrupt while the body is read for the journal (the executor's attempt timer, say) stops
   * that reading and returns the answer, the interrupt status kept for the caller to see.
   */
  public Result send(HttpRequest attempt) throws IOException {
    PullTrackingPublisher[] tracker = new PullTrackingPublisher[1];
    HttpRequest tracked = PullTrackingPublisher.track(attempt, tracker);
    long started = System.nanoTime();
    Capturing capturing;
    try {
      capturing = capture(client.get().send(tracked, HttpResponse.BodyHandlers.ofPublisher()), attempt, started);
    } catch (InterruptedException e) {
      throw interrupted(e);
    } catch (IOException | RuntimeException e) {
      KeyedClient.ServerChallenge challenge = challenge(e);
      if (challenge != null) {
        return Result.answered(challenge.answer());
      }
      Exception classified = classify(e, tracker[0], attempt);
      if (classified instanceof IOException io) {
        throw io;
      }
      throw (RuntimeException) classified;
    }
    try {
      try {
        return capturing.result().get();
      } catch (InterruptedException e) {
        capturing.relay().stopCapturing();
        try {
          return capturing.result().join();
        } finally {
          Thread.currentThread().interrupt();
        }
      }
    } catch (ExecutionException | CompletionException e) {
      throw Settling.asIOException(e);
    }
  }

  /**
   * Sends without blocking: the future the executor waits on for one attempt. It completes with
   * the attempt's snapshot once {@code received} has seen the attempt's result, and fails with an
   * {@link IOException}. Cancelling it (the executor's attempt timeout, a cancelled call)
   * cancels the JDK's exchange, or, once the headers are in, stops reading the body for the
   * journal.
   *
   * @param attempt the attempt's request
   * @param received told of the result before the executor sees its snapshot; must not throw. A
   *     result that arrives after a cancel is released here and never reaches it
   * @return the attempt's snapshot
   */
  public CompletableFuture<ResponseSnapshot> sendAsync(HttpRequest attempt, Consumer<Result> received) {
    CompletableFuture<Result> exchange = exchange(attempt);
    CompletableFuture<ResponseSnapshot> snapshot = exchange.thenApply(r -> {
      received.accept(r);
      return r.snapshot();
    });
    // A dependent future's cancel does not reach its source: without this, the JDK would keep an
    // exchange the executor stopped waiting for, and its connection, open as long as the server
    // likes. Every asynchronous transport (live calls, resumes, the outbox) goes through here.
    snapshot.whenComplete((s, e) -> {
      if (snapshot.isCancelled()) {
        exchange.cancel(true);
      }
    });
    return snapshot;
  }

  /**
   * One exchange and its capture; cancelling the future cancels the exchange or stops the capture,
   * and a result captured after that is released.
   */
  private CompletableFuture<Result> exchange(HttpRequest attempt) {
    PullTrackingPublisher[] tracker = new PullTrackingPublisher[1];
    HttpRequest tracked;
    try {
      tracked = PullTrackingPublisher.track(attempt, tracker);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Result> out = new CompletableFuture<>();
    CompletableFuture<HttpResponse<Flow.Publisher<List<ByteBuffer>>>> sent;
    long started = System.nanoTime();
    try {
      sent = client.get().sendAsync(tracked, HttpResponse.BodyHandlers.ofPublisher());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(classify(e, tracker[0], attempt));
    }
    // A caller that stops waiting (the executor's attempt timeout, a cancelled call) cancels
    // `out`: the cancel must reach the JDK's exchange, which otherwise keeps the abandoned
    // request's connection open; or, once the headers are in, the body read for the journal,
    // which may trickle for as long as the server likes when no timeout bounds it.
    AtomicReference<ResponseRelay> reading = new AtomicReference<>();
    out.whenComplete((c, e) -> {
      if (out.isCancelled()) {
        sent.cancel(true);
        ResponseRelay relay = reading.get();
        if (relay != null) {
          relay.discard();
        }
      }
    });
    sent.whenComplete((r, error) -> {
      if (error == null) {
        CompletableFuture<Result> captured;
        try {
          Capturing capturing = capture(r, attempt, started);
          reading.set(capturing.relay());
          if (out.isCancelled()) {
            capturing.relay().discard(); // the cancel came before the relay was known
          }
          captured = capturing.result();
        } catch (IOException | RuntimeException e) {
          out.completeExceptionally(e);
          return;
        }
        captured.whenComplete((c, e) -> {
          if (e != null) {
            out.completeExceptionally(Settling.unwrap(e));
          } else if (!out.complete(c)) {
            c.release(); // cancelled meanwhile
          }
        });
        return;
      }
      Throwable cause = Settling.unwrap(error);
      KeyedClient.ServerChallenge challenge = challenge(cause);
      if (challenge != null) {
        out.complete(Result.answered(challenge.answer()));
        return;
      }
      out.completeExceptionally(cause instanceof IOException || cause instanceof RuntimeException
          ? classify((Exception) cause, tracker[0], attempt) : cause);
    });
    return out;
  }

  /** A capture under way: the relay that reads the body, and the attempt's result when it is done. */
  private record Capturing(ResponseRelay relay, CompletableFuture<Result> result) {}

  private Capturing capture(HttpResponse<Flow.Publisher<List<ByteBuffer>>> r, HttpRequest attempt, long started)
      throws IOException {
    if (r.statusCode() < 100 || r.statusCode() > 599) {
      ResponseRelay unread = new ResponseRelay();
      r.body().subscribe(unread);
      unread.discard();
      throw new ProtocolException("HTTP status out of range: " + r.statusCode());
    }
    // The status line and headers are in: the attempt is answered, whatever becomes of its body.
    CaptureDeadline deadline = CaptureDeadline.of(System.nanoTime(), attempt.timeout().orElse(null), started,
        attemptTimeout);
    ResponseRelay.Capture capture = ResponseRelay.capture(r, forResume, deadline);
    return new Capturing(capture.relay(), capture.captured().thenApply(c -> {
      Result result = new Result(r, c.snapshot(), c.relay());
      if (forResume) {
        result.release();
      }
      return result;
    }));
  }

  private static InterruptedIOException interrupted(InterruptedException e) {
    Thread.currentThread().interrupt();
    InterruptedIOException io = new InterruptedIOException("interrupted while waiting for the response");
    io.initCause(e);
    return io;
  }

  /**
   * What a failure of the exchange means: nothing sent if the client could not connect, or failed
   * before it began the request (asked the body's length to compose the head, or took a byte of
   * the body); otherwise the failure itself, which the executor records
   * as an ambiguous attempt. An attempt with {@code Expect: 100-continue} has no tracker (its head
   * may have been acted on before any body was asked for, see {@link PullTrackingPublisher}), so
   * only a failed connect makes it not sent.
   *
   * <p>A failed connect is the last exchange's failure only: the JDK retries an exchange itself on
   * a new connection when a reused one turned out closed after the head went out on it (a GET or
   * HEAD, and any method with {@code jdk.httpclient.enableAllMethodRetry}), and when that
   * connect is refused (the server went down right after it read the request) the
   * {@code ConnectException} is all the caller sees. So with a tracker the tracker decides, as for
   * any failure (an earlier exchange asked the length for its head: sent); without one, a failed
   * connect proves nothing was sent only where the JDK would not have retried.
   *
   * <p>The same holds for the other failures that Idem's default table calls not sent by their
   * type, an unknown host, no route, a connect timeout, a failed TLS handshake: once the request
   * may have begun, such a failure is handed on with its type hidden ({@link SentBefore#hidden}), so
   * that the table records the attempt ambiguous, never not sent. The connection-making ones come
   * from another connection than the one that may have carried the head. A TLS handshake failure
   * can come after the head on the same connection: a mutual-TLS server refusing the client's
   * certificate after a TLS 1.3 client finished its side (its application never had the request),
   * but also a TLS 1.2 server that renegotiates for a client certificate after its application read
   * the request (IIS, Kestrel's delayed certificate, Apache's per-location client auth); the client
   * cannot tell them apart, so both are ambiguous.
   */
  private static Exception classify(Exception e, PullTrackingPublisher tracker, HttpRequest attempt) {
    if (e instanceof RequestNotSentException) {
      return e;
    }
    boolean connectFailed = e instanceof ConnectException || e instanceof HttpConnectTimeoutException;
    boolean jdkMayHaveRetried = JdkRetries.mayRetryOnNewConnection(attempt);
    // refuse(), not a look at whether the request was begun yet: the verdict holds only if the
    // client cannot compose the head or take the body after it (see PullTrackingPublisher).
    boolean notBegun = tracker != null ? tracker.refuse() : connectFailed && !jdkMayHaveRetried;
    if (notBegun) {
      return new RequestNotSentException(connectFailed
          ? "could not connect (" + e.getClass().getSimpleName() + "); no byte of the request was sent"
          : "the HTTP client failed with " + e.getClass().getName() + " before it began the request (its head,"
              + " key included, was not composed), so the server cannot have processed it", e);
    }
    if ((tracker != null || jdkMayHaveRetried) && e instanceof IOException io && SentBefore.typedNotSent(io)) {
      return SentBefore.hidden(io, tracker != null ? "the client had asked its body's length for a head"
          : "the JDK sends a GET or HEAD again on a new connection when a reused one closed after its head went"
              + " out, and any method with jdk.httpclient.enableAllMethodRetry");
    }
    return e;
  }

  /** The server's 401 that the keyed client's authenticator declined, if that is what failed. */
  private static KeyedClient.ServerChallenge challenge(Throwable t) {
    for (int depth = 0; t != null && depth < 10; t = t.getCause(), depth++) {
      if (t instanceof KeyedClient.ServerChallenge c) {
        return c;
      }
    }
    return null;
  }
}
