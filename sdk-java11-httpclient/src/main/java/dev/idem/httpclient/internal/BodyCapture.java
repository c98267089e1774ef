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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
  private static final Logger LOG = LoggerFactory.getLogger(BodyCapture.class);

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
   *     {@link HttpTimeoutException}, on the JDK's timer thread (so what depends on the capture
   *     must hand anything slow elsewhere), and then the subscription is cancelled
   * @param cancels where that cancel runs: it is the app's code and may block, so never the JDK's
   *     shared timer thread, nor a thread the publisher may be blocking; a cancel that blocks there
   *     delays only other cancels, never a capture's failure
   * @return the bytes (empty for a request without a publisher); fails with
   *     {@link RequestNotSentException} if the publisher signals an error, or publishes fewer or
   *     more bytes than its {@code contentLength} declares (when that is not negative, unknown)
   */
  public static CompletableFuture<byte[]> capture(HttpRequest request, long maxBytes, Bound bound,
      Executor cancels) {
    return capture(request, maxBytes, bound, cancels, f -> { });
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
      Executor cancels, Consumer<CompletableFuture<byte[]>> beforeSubscribe) {
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
    // caller must still hear of the timeout on time, as from the JDK client. The timeout fails the
    // capture on the JDK's timer thread, which is safe because nothing of the app's runs on what
    // depends on the capture (CallEngine hands that to the default async pool); the publisher's
    // cancel, foreign code that may block, goes to the cancels executor. The timer is cancelled
    // once the body is in, so it keeps nothing of the call alive.
    CompletableFuture<Void> timer = new CompletableFuture<Void>().orTimeout(bound.nanos(),
        TimeUnit.NANOSECONDS);
    timer.exceptionally(e -> {
      collector.timeOut(timedOut(request, bound), cancels);
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
    /**
     * Set by {@link #timeOut} before its cancel reads {@link #subscription}, which onSubscribe sets
     * before it reads this: so one of them cancels a subscription that comes at any time.
     */
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
     * Hands the publisher's cancel to {@code cancels} and fails the capture without waiting for that
     * cancel (a refused hand-over becomes the failure's cause). Takes no lock (the publisher
     * may hold this collector's, blocked in a read inside {@code request}) and runs no app code:
     * the call ends on time even when the publisher's cancel blocks, as cancels that close a
     * stream another thread is stuck reading do.
     */
    void timeOut(HttpTimeoutException e, Executor cancels) {
      if (result.isDone()) {
        return;
      }
      // From here on the publisher's signals are ignored (and a subscription that comes later is
      // cancelled in onSubscribe), so the call ends with this timeout however the cancel goes.
      timedOut = true;
      try {
        cancels.execute(this::cancelForTimeout);
      } catch (Throwable handOver) {
        // No thread takes the cancel (refused, or the JVM could make none): the call still ends
        // on time, and says why its publisher was left uncancelled.
        e.initCause(handOver);
      }
      result.completeExceptionally(e);
    }

    private void cancelForTimeout() {
      Flow.Subscription s = subscription;
      if (s == null) {
        return; // not subscribed yet: onSubscribe cancels it, seeing timedOut
      }
      try {
        s.cancel();
      } catch (Throwable cancelFailed) {
        // The call has already failed with its timeout; this is the publisher's fault, for its owner.
        LOG.warn("the body publisher of {} threw from Subscription.cancel after its read timed out",
            target(request), cancelFailed);
      }
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
      if (timedOut || result.isDone()) {
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
      if (timedOut) {
        return; // the call already ended with its timeout
      }
      result.completeExceptionally(notCaptured(request, t));
    }

    @Override
    public synchronized void onComplete() {
      if (timedOut) {
        return; // the call already ended with its timeout
      }
      if (declared >= 0 && out.size() != declared) {
        result.completeExceptionally(tooFew(request, declared, out.size()));
        return;
      }
      result.complete(out.toByteArray());
    }
  }
}
