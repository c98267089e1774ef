package dev.idem.httpclient.internal;

import dev.idem.core.spi.RequestNotSentException;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;

/**
 * Reads a request's {@link BodyPublisher} once, into bytes. The journal needs the exact payload
 * before anything is sent, and every attempt must carry those same bytes, so the publisher is
 * subscribed exactly once, here, and never again: a one-shot publisher (a stream, a pipe) is
 * therefore safe to retry, and one that cannot be read (already consumed, failing) is refused
 * before the journal or the network sees anything.
 */
public final class BodyCapture {
  private BodyCapture() {}

  /**
   * Subscribes to the request's body publisher and collects what it publishes.
   *
   * @param maxBytes the most bytes accepted; a larger body fails with {@link IllegalArgumentException}
   * @return the bytes (empty for a request without a publisher); fails with
   *     {@link RequestNotSentException} if the publisher signals an error
   */
  public static CompletableFuture<byte[]> capture(HttpRequest request, long maxBytes) {
    Optional<BodyPublisher> publisher = request.bodyPublisher();
    if (publisher.isEmpty()) {
      return CompletableFuture.completedFuture(new byte[0]);
    }
    long declared = publisher.get().contentLength();
    if (declared > maxBytes) {
      return CompletableFuture.failedFuture(tooLarge(request, maxBytes));
    }
    Collector collector = new Collector(request, maxBytes);
    try {
      publisher.get().subscribe(collector);
    } catch (RuntimeException e) {
      collector.result.completeExceptionally(notCaptured(request, e));
    }
    return collector.result;
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

  /**
   * The request as messages name it: without the URI's query and user info, either of which may
   * carry a credential, in an exception the app is likely to log.
   */
  private static String target(HttpRequest request) {
    URI u = request.uri();
    return request.method() + " " + u.getScheme() + "://" + u.getHost() + (u.getPort() < 0 ? "" : ":" + u.getPort())
        + u.getRawPath();
  }

  private static final class Collector implements Flow.Subscriber<ByteBuffer> {
    final CompletableFuture<byte[]> result = new CompletableFuture<>();
    private final HttpRequest request;
    private final long maxBytes;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private Flow.Subscription subscription;

    Collector(HttpRequest request, long maxBytes) {
      this.request = request;
      this.maxBytes = maxBytes;
    }

    @Override
    public synchronized void onSubscribe(Flow.Subscription s) {
      if (subscription != null) {
        s.cancel(); // rule 2.5: one subscription only
        return;
      }
      subscription = s;
      s.request(Long.MAX_VALUE);
    }

    @Override
    public synchronized void onNext(ByteBuffer item) {
      if (result.isDone()) {
        return;
      }
      if (out.size() + (long) item.remaining() > maxBytes) {
        subscription.cancel();
        result.completeExceptionally(tooLarge(request, maxBytes));
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
      result.complete(out.toByteArray());
    }
  }
}
