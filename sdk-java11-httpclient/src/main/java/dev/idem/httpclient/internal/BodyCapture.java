package dev.idem.httpclient.internal;

import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.Flow;
import java.util.function.Consumer;

/**
 * Reads a request's {@link BodyPublisher} once, into bytes. The journal needs the exact payload
 * before anything is sent, and every attempt must carry those same bytes, so the publisher is
 * subscribed exactly once, here, and never again: a one-shot publisher (a stream, a pipe) is
 * therefore safe to retry, and one that cannot be read (already consumed, failing) is refused
 * before the journal or the network sees anything. So is one whose declared
 * {@link BodyPublisher#contentLength() contentLength} differs from what it publishes: the JDK client
 * fails such a request ("Too few bytes returned by the publisher", "Too many bytes in request
 * body"), while the bytes captured here would be sent whole with their own length, a truncated or
 * overlong payload the server takes as complete.
 */
public final class BodyCapture {
  private BodyCapture() {}

  /**
   * How long a capture may take, and what set that limit, for the message of its timeout.
   *
   * @param limit the longest the publisher may take to publish the whole body
   * @param source what set it, such as "the request's timeout"
   */
  public record Bound(Duration limit, String source) {
    public Bound {
      Objects.requireNonNull(limit, "limit");
    }

    /** The limit in nanoseconds, saturated: a Duration of centuries does not overflow. */
    long nanos() {
      try {
        return Math.max(0, limit.toNanos());
      } catch (ArithmeticException e) {
        return Long.MAX_VALUE;
      }
    }
  }

  /**
   * Subscribes to the request's body publisher and collects what it publishes.
   *
   * @param maxBytes the most bytes accepted; a larger body fails with {@link IllegalArgumentException}
   * @param bound how long the publisher may take; past it the capture fails with
   *     {@link HttpTimeoutException} and the subscription is cancelled
   * @param timeouts where that failure is delivered (and so where what depends on the capture
   *     runs then); never the JDK's shared timer thread, nor a thread the publisher may be blocking
   * @return the bytes (empty for a request without a publisher); fails with
   *     {@link RequestNotSentException} if the publisher signals an error, or publishes fewer or
   *     more bytes than its {@code contentLength} declares (when that is not negative, unknown)
   */
  public static CompletableFuture<byte[]> capture(HttpRequest request, long maxBytes, Bound bound,
      Executor timeouts) {
    return capture(request, maxBytes, bound, timeouts, f -> { });
  }

  /**
   * As {@link #capture(HttpRequest, long, Bound, Executor)}, handing the future to
   * {@code beforeSubscribe} before the publisher is subscribed to. A publisher may block the thread
   * in its {@code subscribe} (an InputStream's read) until long after the bound: what is attached
   * to the future there hears of the timeout on time, where what is attached to the returned
   * future waits for the subscribe to return.
   *
   * @param beforeSubscribe given the future first
   * @return the same future
   */
  public static CompletableFuture<byte[]> capture(HttpRequest request, long maxBytes, Bound bound,
      Executor timeouts, Consumer<CompletableFuture<byte[]>> beforeSubscribe) {
    Optional<BodyPublisher> publisher = request.bodyPublisher();
    if (publisher.isEmpty()) {
      return handed(CompletableFuture.completedFuture(new byte[0]), beforeSubscribe);
    }
    long declared = publisher.get().contentLength();
    if (declared > maxBytes) {
      return handed(CompletableFuture.failedFuture(tooLarge(request, maxBytes)), beforeSubscribe);
    }
    Collector collector = new Collector(request, maxBytes, declared);
    // Armed before the subscribe: a publisher may block in it (an InputStream's read), and the
    // caller must still hear of the timeout on time, as from the JDK client. The JDK's timer
    // thread only hands the timeout over; the timer is cancelled once the body is in, so it
    // keeps nothing of the call alive.
    CompletableFuture<Void> timer = new CompletableFuture<Void>().orTimeout(bound.nanos(),
        TimeUnit.NANOSECONDS);
    timer.exceptionally(e -> {
      try {
        timeouts.execute(() -> collector.timeOut(timedOut(request, bound)));
      } catch (Throwable handOver) {
        // No thread took the delivery (refused, or the JVM could make none). Thrown here, on the
        // JDK's timer thread, it would be lost and the call would wait for good: fail it with the
        // reason. The publisher is not cancelled (that is foreign code, not for the shared timer
        // thread); the capture ignores whatever it publishes from now on.
        HttpTimeoutException failed = timedOut(request, bound);
        failed.initCause(handOver);
        collector.timeOutUncancelled(failed);
      }
      return null;
    });
    collector.result.whenComplete((bytes, e) -> timer.complete(null));
    beforeSubscribe.accept(collector.result);
    try {
      publisher.get().subscribe(collector);
    } catch (RuntimeException e) {
      collector.result.completeExceptionally(notCaptured(request, e));
    }
    return collector.result;
  }

  private static CompletableFuture<byte[]> handed(CompletableFuture<byte[]> f,
      Consumer<CompletableFuture<byte[]>> beforeSubscribe) {
    beforeSubscribe.accept(f);
    return f;
  }

  private static HttpTimeoutException timedOut(HttpRequest request, Bound bound) {
    return new HttpTimeoutException("the body publisher of " + target(request) + " did not publish the whole body"
        + " within " + bound.limit() + " (" + bound.source() + ") while Idem read it for the journal; the"
        + " operation never began: nothing was journaled or sent");
  }

  private static IllegalArgumentException tooLarge(HttpRequest request, long maxBytes) {
    return new IllegalArgumentException("the body of " + target(request) + " is larger than "
        + maxBytes + " bytes; Idem journals the whole payload, so it refuses bodies above maxBodyBytes."
        + " Nothing was sent");
  }

  private static RequestNotSentException notCaptured(HttpRequest request, Throwable cause) {
    return new RequestNotSentException("the body publisher of " + target(request)
        + " failed while Idem read it for the journal (a one-shot publisher that was already consumed?);"
        + " nothing was journaled or sent", cause);
  }

  private static RequestNotSentException tooFew(HttpRequest request, long declared, long published) {
    return new RequestNotSentException("too few bytes returned by the body publisher of " + target(request)
        + ": its contentLength declared " + declared + " bytes, it published " + published + " (a stream cut"
        + " short?); the JDK client refuses such a request, and Idem refuses to journal or send the truncated"
        + " payload as if whole. Nothing was journaled or sent", null);
  }

  private static RequestNotSentException tooMany(HttpRequest request, long declared) {
    return new RequestNotSentException("too many bytes returned by the body publisher of " + target(request)
        + ": its contentLength declared " + declared + " bytes, it published more (a stale length?); the JDK"
        + " client refuses such a request, and so does Idem. Nothing was journaled or sent", null);
  }

  /**
   * The request as messages name it: without the URI's user info, query and fragment, any of which
   * may carry a credential, in an exception the app is likely to log.
   */
  private static String target(HttpRequest request) {
    return request.method() + " " + RequestSnapshot.redactedUri(request.uri());
  }

  private static final class Collector implements Flow.Subscriber<ByteBuffer> {
    final CompletableFuture<byte[]> result = new CompletableFuture<>();
    private final HttpRequest request;
    private final long maxBytes;
    /** The publisher's contentLength, or negative if it did not know it. */
    private final long declared;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private volatile Flow.Subscription subscription;
    /** Set by {@link #timeOut} before it reads {@link #subscription}, which is set before this is read. */
    private volatile boolean timedOut;

    Collector(HttpRequest request, long maxBytes, long declared) {
      this.request = request;
      this.maxBytes = maxBytes;
      this.declared = declared;
    }

    private void fail(Throwable e) {
      subscription.cancel();
      result.completeExceptionally(e);
    }

    /**
     * Fails the capture and stops the publisher. Takes no lock: the publisher may hold this
     * collector's, blocked in a read inside {@code request}.
     */
    void timeOut(HttpTimeoutException e) {
      if (result.isDone()) {
        return;
      }
      // The publisher is stopped before anyone hears of the timeout, so that nothing reads on
      // for a call that is over.
      timedOut = true;
      Flow.Subscription s = subscription;
      try {
        if (s != null) {
          s.cancel();
        }
      } catch (Throwable cancelFailed) {
        // The call still ends on time, and says what went wrong on the way.
        e.addSuppressed(cancelFailed);
      }
      result.completeExceptionally(e);
    }

    /**
     * Fails the capture without touching the publisher, for a timeout that no thread of Idem's
     * could take: a subscription that comes later is still cancelled.
     */
    void timeOutUncancelled(HttpTimeoutException e) {
      timedOut = true;
      result.completeExceptionally(e);
    }

    @Override
    public synchronized void onSubscribe(Flow.Subscription s) {
      if (subscription != null) {
        s.cancel(); // rule 2.5: one subscription only
        return;
      }
      subscription = s;
      if (timedOut) {
        s.cancel(); // timed out before the publisher got round to subscribing us
        return;
      }
      s.request(Long.MAX_VALUE);
    }

    @Override
    public synchronized void onNext(ByteBuffer item) {
      if (result.isDone()) {
        return;
      }
      long total = out.size() + (long) item.remaining();
      // Stopped at the first byte past the declared length, as the JDK client stops; the declared
      // length is never above maxBytes, so this comes first and names the real fault.
      if (declared >= 0 && total > declared) {
        fail(tooMany(request, declared));
        return;
      }
      if (total > maxBytes) {
        fail(tooLarge(request, maxBytes));
        return;
      }
      byte[] chunk = new byte[item.remaining()];
      item.get(chunk);
      out.writeBytes(chunk);
    }

    @Override
    public synchronized void onError(Throwable t) {
      result.completeExceptionally(notCaptured(request, t));
    }

    @Override
    public synchronized void onComplete() {
      if (declared >= 0 && out.size() != declared) {
        result.completeExceptionally(tooFew(request, declared, out.size()));
        return;
      }
      result.complete(out.toByteArray());
    }
  }
}
