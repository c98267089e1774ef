package dev.idem.httpclient.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.nio.ByteBuffer;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An attempt's body publisher, and the one place that decides whether the attempt was sent. A
 * client cannot write the head of a request with a body without asking the body's length first:
 * the head carries it ({@code Content-Length}, or {@code Transfer-Encoding: chunked} when it is
 * unknown; on HTTP/2 the {@code content-length} field and whether HEADERS ends the stream). The
 * JDK client asks it just before it composes the head and never earlier (JDK 17 and 25:
 * {@code Http1Request.headers()} in {@code Http1Exchange.sendHeadersAsync}, after the connection
 * is up; {@code Stream.sendHeadersAsync} on HTTP/2, before the HEADERS frame), and takes the body
 * itself only after the head was handed to the connection. So a failure before the client asked
 * the length left the server without the request's head, key included: nothing can have been
 * processed, and the attempt is safe. A failure after it, even before the first byte of the body
 * was taken, is not: the head may be on the wire, and a server that acts on the head (a servlet
 * runs once the head is parsed, and a handler that ignores the body acts then; an HTTP/2 server
 * that dispatches on HEADERS) may have applied the request. "No byte of the body taken" alone,
 * the rule before, called such an attempt not sent. This is what java.net.http lets one observe
 * of "before or after the request was written"; OkHttp's adapter tells it from its call's events.
 *
 * <p>"Not begun yet" is only a verdict once nothing can begin the request afterwards: the client
 * may report a failure and still go on (the JDK's HTTP/2 stream completes the response future of
 * a cancelled exchange before it stops sending DATA frames; an app's HttpClient decorator that
 * gives up waiting may leave the exchange under it running), and a look at a flag followed by the
 * client's next step would record as not sent a request that then goes out. So the request moves
 * once, atomically, from untouched either to {@linkplain #refuse refused} (the attempt is not
 * sent; asking the length then throws, so no head is composed, and a subscriber gets an
 * IOException instead of a byte) or to begun (the length asked or a byte taken: it may have been
 * sent).
 *
 * <p>The length asked is taken as "begun" even where the JDK asks it for a head that cannot go
 * out: a TLS handshake that the server's answer fails while the client's TLS writer is still in
 * its loop can complete the connection's ALPN future normally (SSLFlowDelegate.Writer, JDK 17 and
 * 25), and the JDK then composes the head on a connection that sends nothing. Such an attempt is
 * ambiguous, on the safe side; nothing outside the JDK's connection tells it apart.
 *
 * <p>{@code Expect: 100-continue} is not tracked at all: its failures are ambiguous, as a
 * bodyless request's are. With {@link HttpRequest#expectContinue()} the client sends the request
 * head, key included, and then waits for the server's answer before it takes a byte of the body;
 * a server that acts on the head may have applied the request in that wait. (Asking the length
 * for the head tells that too; the attempt is left untracked so that nothing depends on it.) An
 * {@code Expect} header that gets through to the attempt (the JDK restricts it; a system property
 * can allow it) is treated the same way.
 *
 * <p>Thread-safe.
 */
final class PullTrackingPublisher implements BodyPublisher {
  private static final int UNTOUCHED = 0;
  /** The client asked the length for the head, or took a byte: the request may have been sent. */
  private static final int BEGUN = 1;
  private static final int REFUSED = 2;

  private final BodyPublisher delegate;
  private final AtomicInteger state = new AtomicInteger(UNTOUCHED);

  private PullTrackingPublisher(BodyPublisher delegate) {
    this.delegate = delegate;
  }

  /**
   * The attempt with its body publisher wrapped, or the attempt itself when it has no publisher to
   * tell by (a request built without one, as {@code GET()} builds it, counts as sent once the
   * client had it) or when the publisher does not tell ({@link #expectsContinue}: its head goes
   * out, and may be acted on, before the body). An empty body ({@code noBody()}, a zero-length
   * array) or one of unknown length is tracked too: the client asks its length for the head all
   * the same ({@code Content-Length: 0}, or chunked), and that ask is what tells.
   */
  static HttpRequest track(HttpRequest attempt, PullTrackingPublisher[] tracker) {
    if (attempt.bodyPublisher().isEmpty() || expectsContinue(attempt)) {
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
   * Makes sure the client never begins the request, if it has not: true if it never will (refused
   * now or before: no head composed, no byte of the body handed over), false if it asked the
   * body's length for the head or took a byte, and the request may have reached the server.
   */
  boolean refuse() {
    return state.compareAndSet(UNTOUCHED, REFUSED) || state.get() == REFUSED;
  }

  /**
   * Whether the client may go on with the request (compose its head, take a byte): true once
   * begun, false once refused.
   */
  private boolean begin() {
    return state.compareAndSet(UNTOUCHED, BEGUN) || state.get() == BEGUN;
  }

  private static IOException refusal() {
    return new IOException("this attempt was recorded as not sent before the HTTP client began it; it is not"
        + " sent now");
  }

  /**
   * The body's length, asked by the client for the request's head: from here the request may be
   * on the wire. Throws {@link UncheckedIOException} once the attempt was recorded as not sent,
   * which fails the exchange before its head is composed (the JDK fails the exchange on any
   * throwable there).
   */
  @Override
  public long contentLength() {
    if (!begin()) {
      throw new UncheckedIOException(refusal());
    }
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
        if (!begin()) {
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
