package dev.idem.httpclient.internal;

import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.nio.ByteBuffer;
import java.util.concurrent.Flow;

/**
 * An attempt's body publisher that remembers whether the client pulled any byte of the body. The
 * JDK client takes the body from its publisher only once the connection is up and the request
 * headers are on their way, so a failure before the first byte was pulled left the server without
 * the body it needs (a non-empty Content-Length it never got): nothing can have been processed,
 * and the attempt is safe. This is what java.net.http lets one observe of "before or after the
 * request was written"; OkHttp's adapter does the same with its RequestBody's writeTo.
 *
 * <p>Thread-safe.
 */
final class PullTrackingPublisher implements BodyPublisher {
  private final BodyPublisher delegate;
  private volatile boolean pulled;

  private PullTrackingPublisher(BodyPublisher delegate) {
    this.delegate = delegate;
  }

  /**
   * The attempt with its body publisher wrapped, or the attempt itself when it has no body to
   * tell by (a bodyless request counts as sent once the client had it).
   */
  static HttpRequest track(HttpRequest attempt, PullTrackingPublisher[] tracker) {
    if (attempt.bodyPublisher().isEmpty() || attempt.bodyPublisher().get().contentLength() <= 0) {
      return attempt;
    }
    tracker[0] = new PullTrackingPublisher(attempt.bodyPublisher().get());
    return HttpRequest.newBuilder(attempt, (name, value) -> true).method(attempt.method(), tracker[0]).build();
  }

  /** Whether the client took any byte of the body (so the request may have reached the server whole). */
  boolean pulled() {
    return pulled;
  }

  @Override
  public long contentLength() {
    return delegate.contentLength();
  }

  @Override
  public void subscribe(Flow.Subscriber<? super ByteBuffer> subscriber) {
    delegate.subscribe(new Flow.Subscriber<ByteBuffer>() {
      @Override
      public void onSubscribe(Flow.Subscription subscription) {
        subscriber.onSubscribe(subscription);
      }

      @Override
      public void onNext(ByteBuffer item) {
        pulled = true;
        subscriber.onNext(item);
      }

      @Override
      public void onError(Throwable throwable) {
        subscriber.onError(throwable);
      }

      @Override
      public void onComplete() {
        subscriber.onComplete();
      }
    });
  }
}
