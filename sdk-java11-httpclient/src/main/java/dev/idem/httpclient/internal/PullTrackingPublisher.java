package dev.idem.httpclient.internal;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.nio.ByteBuffer;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An attempt's body publisher, and the one place that decides whether the attempt was sent. The
 * JDK client takes the body from its publisher only once the connection is up and the request
 * headers are on their way, so a failure before the first byte was pulled left the server without
 * the body it needs (a non-empty Content-Length it never got): nothing can have been processed,
 * and the attempt is safe. This is what java.net.http lets one observe of "before or after the
 * request was written"; OkHttp's adapter does the same with its RequestBody's writeTo.
 *
 * <p>"Not pulled yet" is only a verdict once nothing can pull the body afterwards: the client may
 * report a failure and still take the body (the JDK's HTTP/2 stream completes the response future
 * of a cancelled exchange before it stops sending DATA frames; an app's HttpClient decorator that
 * gives up waiting may leave the exchange under it running), and a look at a flag followed by that
 * pull would record as not sent a request that then goes out whole. So the body moves once,
 * atomically, from untouched either to {@linkplain #refuse refused} (the attempt is not sent; a
 * later subscriber gets an IOException instead of a byte) or to pulled (it may have been sent).
 *
 * <p>{@code Expect: 100-continue} breaks the premise, so such an attempt is not tracked at all: its
 * failures are ambiguous, as a bodyless request's are. With {@link HttpRequest#expectContinue()}
 * the client sends the request head, key included, and then waits for the server's answer before
 * it takes a byte of the body; a server that acts on the head (a handler that never reads the body
 * runs once the head is in) may have applied the request, and that wait is its whole processing
 * time, so "the body was never pulled" no longer means "the server cannot have acted". An
 * {@code Expect} header that gets through to the attempt (the JDK restricts it; a system property
 * can allow it) is treated the same way.
 *
 * <p>Thread-safe.
 */
final class PullTrackingPublisher implements BodyPublisher {
  private static final int UNTOUCHED = 0;
  private static final int PULLED = 1;
  private static final int REFUSED = 2;

  private final BodyPublisher delegate;
  private final AtomicInteger state = new AtomicInteger(UNTOUCHED);

  private PullTrackingPublisher(BodyPublisher delegate) {
    this.delegate = delegate;
  }

  /**
   * The attempt with its body publisher wrapped, or the attempt itself when it has no body to
   * tell by (a bodyless request counts as sent once the client had it) or when the body does not
   * tell ({@link #expectsContinue}: its head goes out, and may be acted on, before the body).
   */
  static HttpRequest track(HttpRequest attempt, PullTrackingPublisher[] tracker) {
    if (attempt.bodyPublisher().isEmpty() || attempt.bodyPublisher().get().contentLength() <= 0
        || expectsContinue(attempt)) {
      return attempt;
    }
    tracker[0] = new PullTrackingPublisher(attempt.bodyPublisher().get());
    return HttpRequest.newBuilder(attempt, (name, value) -> true).method(attempt.method(), tracker[0]).build();
  }

  /**
   * Whether the client sends {@code attempt}'s head and waits for the server before its body:
   * {@link HttpRequest#expectContinue()}, or an {@code Expect: 100-continue} header (any case) that
   * the JDK let through.
   */
  static boolean expectsContinue(HttpRequest attempt) {
    return attempt.expectContinue()
        || attempt.headers().allValues("Expect").stream().anyMatch(v -> v.trim().equalsIgnoreCase("100-continue"));
  }

  /**
   * Makes sure no byte of the body is ever handed to the client, if none was: true if none ever
   * will be (refused now or before), false if the client took some and the request may have
   * reached the server whole.
   */
  boolean refuse() {
    return state.compareAndSet(UNTOUCHED, REFUSED) || state.get() == REFUSED;
  }

  /** Whether a byte may be handed to the client: true once pulled, false once refused. */
  private boolean pull() {
    return state.compareAndSet(UNTOUCHED, PULLED) || state.get() == PULLED;
  }

  private static IOException refusal() {
    return new IOException("this attempt was recorded as not sent before the HTTP client took its body; it is not"
        + " sent now");
  }

  @Override
  public long contentLength() {
    return delegate.contentLength();
  }

  @Override
  public void subscribe(Flow.Subscriber<? super ByteBuffer> subscriber) {
    if (state.get() == REFUSED) {
      subscriber.onSubscribe(new Flow.Subscription() {
        @Override
        public void request(long n) {}

        @Override
        public void cancel() {}
      });
      subscriber.onError(refusal());
      return;
    }
    delegate.subscribe(new Flow.Subscriber<ByteBuffer>() {
      // Written and read only in the delegate's signals, which are serial (Reactive Streams 1.3).
      private Flow.Subscription upstream;
      private boolean failed;

      @Override
      public void onSubscribe(Flow.Subscription subscription) {
        upstream = subscription;
        subscriber.onSubscribe(subscription);
      }

      @Override
      public void onNext(ByteBuffer item) {
        if (failed) {
          return;
        }
        if (!pull()) {
          // Refused since this subscription began: the attempt is recorded as not sent, so this
          // byte and every later one stay here, and the client's exchange fails.
          failed = true;
          upstream.cancel();
          subscriber.onError(refusal());
          return;
        }
        subscriber.onNext(item);
      }

      @Override
      public void onError(Throwable throwable) {
        if (!failed) {
          subscriber.onError(throwable);
        }
      }

      @Override
      public void onComplete() {
        if (!failed) {
          subscriber.onComplete();
        }
      }
    });
  }
}
