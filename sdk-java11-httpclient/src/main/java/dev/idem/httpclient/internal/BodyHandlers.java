package dev.idem.httpclient.internal;

import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.BodySubscriber;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Applies the caller's {@link BodyHandler}: to the live body of the response this call received
 * ({@link #attach}, which streams it), or to the stored bytes of a response from the journal
 * ({@link #apply}, one buffer when asked, as the JDK client would have).
 */
public final class BodyHandlers {
  private BodyHandlers() {}

  /** Status, headers and version, as a body handler sees them. */
  public record Info(int statusCode, HttpHeaders headers, HttpClient.Version version)
      implements HttpResponse.ResponseInfo {}

  /**
   * Feeds {@code body} to the subscriber the handler makes for {@code info}.
   *
   * @return the handler's body, when its subscriber produces it
   */
  public static <T> CompletableFuture<T> apply(BodyHandler<T> handler, Info info, byte[] body) {
    BodySubscriber<T> subscriber;
    try {
      subscriber = handler.apply(info);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    subscriber.onSubscribe(new OneBuffer(subscriber, body));
    return subscriber.getBody().toCompletableFuture();
  }

  /**
   * Hands the live body of {@code sent} to the subscriber the handler makes for {@code info}: the
   * captured prefix, then the rest as it arrives, as fast as the subscriber asks.
   *
   * @return the handler's body, when its subscriber produces it
   */
  public static <T> CompletableFuture<T> attach(BodyHandler<T> handler, Info info, AttemptSender.Result sent) {
    BodySubscriber<T> subscriber;
    try {
      subscriber = handler.apply(info);
    } catch (RuntimeException e) {
      sent.release();
      return CompletableFuture.failedFuture(e);
    }
    return sent.attach(subscriber);
  }

  /** Publishes one buffer then completes, on the first positive request. */
  private static final class OneBuffer implements Flow.Subscription {
    private final BodySubscriber<?> subscriber;
    private final byte[] body;
    private final AtomicBoolean done = new AtomicBoolean();

    OneBuffer(BodySubscriber<?> subscriber, byte[] body) {
      this.subscriber = subscriber;
      this.body = body;
    }

    @Override
    public void request(long n) {
      if (n <= 0) {
        if (done.compareAndSet(false, true)) {
          subscriber.onError(new IllegalArgumentException("non-positive request: " + n)); // rule 3.9
        }
        return;
      }
      if (done.compareAndSet(false, true)) {
        if (body.length > 0) {
          subscriber.onNext(List.of(ByteBuffer.wrap(body)));
        }
        subscriber.onComplete();
      }
    }

    @Override
    public void cancel() {
      done.set(true);
    }
  }
}
