package dev.idem.httpclient.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The "not sent" verdict is atomic with the client taking the body: whichever comes first wins, and
 * a refused body never reaches the client, even through a subscription the client made before the
 * verdict (the JDK's HTTP/2 stream subscribes to the body with the headers, and asks for its bytes
 * as the flow-control window allows: possibly after its response future already failed).
 */
class PullTrackingPublisherTest {
  private static final String BODY = "{\"qty\":1}";

  @Test
  void aSubscriptionMadeBeforeTheVerdictGetsNoByteAfterIt() {
    PullTrackingPublisher tracker = tracked();
    Taker taker = new Taker();
    tracker.subscribe(taker);
    assertNull(taker.error.get(), "subscribed, nothing asked for yet");

    assertTrue(tracker.refuse(), "no byte was taken: not sent");
    taker.subscription.get().request(Long.MAX_VALUE); // the client asks for the body after the verdict

    assertEquals(0, taker.bytes.get(), "a byte of a body recorded as not sent reached the client");
    assertInstanceOf(IOException.class, taker.error.get());
    assertFalse(taker.completed, "the client must not see the body as complete");
    assertTrue(tracker.refuse(), "the verdict stays");
  }

  @Test
  void aSubscriptionMadeAfterTheVerdictFailsAtOnce() {
    PullTrackingPublisher tracker = tracked();
    assertTrue(tracker.refuse());

    Taker taker = new Taker();
    tracker.subscribe(taker);
    taker.subscription.get().request(Long.MAX_VALUE);

    assertEquals(0, taker.bytes.get());
    assertInstanceOf(IOException.class, taker.error.get());
  }

  @Test
  void aBodyTakenBeforeTheVerdictMayHaveBeenSent() {
    PullTrackingPublisher tracker = tracked();
    Taker taker = new Taker();
    tracker.subscribe(taker);
    taker.subscription.get().request(Long.MAX_VALUE);
    assertEquals(BODY.length(), taker.bytes.get());
    assertTrue(taker.completed);

    assertFalse(tracker.refuse(), "the client took the body: the request may have reached the server");
    assertFalse(tracker.refuse());
  }

  /**
   * The client asks the body's length to compose the head (Content-Length): from then the head,
   * key included, may be on the wire before any byte of the body is taken, so the attempt is no
   * longer "not sent".
   */
  @Test
  void aLengthAskedForTheHeadMayHaveBeenSent() {
    PullTrackingPublisher tracker = tracked();
    assertEquals(BODY.length(), tracker.contentLength());

    assertFalse(tracker.refuse(), "the head may be out, though no byte of the body was taken");
    Taker taker = new Taker();
    tracker.subscribe(taker);
    taker.subscription.get().request(Long.MAX_VALUE);
    assertEquals(BODY.length(), taker.bytes.get(), "the request goes on whole");
    assertTrue(taker.completed);
  }

  /** Once recorded as not sent, the client cannot compose the head: asking the length fails it. */
  @Test
  void afterTheVerdictTheHeadCannotBeComposed() {
    PullTrackingPublisher tracker = tracked();
    assertTrue(tracker.refuse());

    UncheckedIOException e = assertThrows(UncheckedIOException.class, tracker::contentLength);
    assertInstanceOf(IOException.class, e.getCause());
    assertTrue(tracker.refuse(), "the verdict stays");
  }

  private static PullTrackingPublisher tracked() {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/orders"))
        .POST(HttpRequest.BodyPublishers.ofString(BODY)).build();
    PullTrackingPublisher[] tracker = new PullTrackingPublisher[1];
    HttpRequest tracked = PullTrackingPublisher.track(request, tracker);
    assertSame(tracker[0], tracked.bodyPublisher().orElseThrow());
    return tracker[0];
  }

  /** A client's body subscriber that asks for nothing until the test says so. */
  private static final class Taker implements Flow.Subscriber<ByteBuffer> {
    final AtomicReference<Flow.Subscription> subscription = new AtomicReference<>();
    final AtomicLong bytes = new AtomicLong();
    final AtomicReference<Throwable> error = new AtomicReference<>();
    volatile boolean completed;

    @Override
    public void onSubscribe(Flow.Subscription s) {
      subscription.set(s);
    }

    @Override
    public void onNext(ByteBuffer item) {
      bytes.addAndGet(item.remaining());
    }

    @Override
    public void onError(Throwable t) {
      error.set(t);
    }

    @Override
    public void onComplete() {
      completed = true;
    }
  }
}
