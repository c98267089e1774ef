package dev.idem.httpclient.internal;

import static dev.idem.httpclient.internal.RelayFixtures.bytes;
import static dev.idem.httpclient.internal.RelayFixtures.response;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.spi.adapter.CaptureDeadline;
import dev.idem.httpclient.internal.RelayFixtures.Upstream;
import java.io.InputStream;
import java.net.http.HttpResponse.BodySubscribers;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A capture stopped at its time limit (a trickling error body) leaves its one-item request
 * outstanding at the wire. {@code ResponseRelay.Downstream.deliver} hands the prefix over, then
 * passes upstream only the demand the caller's subscriber has left ({@code rest}), without counting
 * the capture's outstanding item. When that item arrives after the hand-over, {@code onNext} sends
 * it live to the caller's subscriber although it asked for nothing more: one item more than
 * requested (Reactive Streams rule 1.1).
 *
 * <p>It matters with the JDK's own {@code BodySubscribers.ofInputStream()} (what
 * {@code BodyHandlers.ofInputStream()} uses), which requests in lock-step with a one-place queue:
 * the unrequested item finds the queue full, the stream fails ("queue is full") and the app's
 * {@code read} throws an IOException for a body that arrived whole. The plain JDK client never
 * sends it an unrequested item.
 *
 * <p>Not new with 7228056d/fb9239cd (the relay before them does the same), but fb9239cd's own
 * case: it holds an item arriving during the hand-over, not the same item arriving just after it.
 * A fix: count the capture's outstanding item (requested upstream, not yet arrived) against the
 * demand passed upstream at the hand-over.
 *
 * <p>Deterministic: the test plays the JDK's part (the publisher) on its own thread.
 */
class RvRtoday3LateCaptureItemBeyondDemandTest {

  @Test
  void anInputStreamSubscriberReadsTheWholeBodyAfterACaptureStoppedAtItsTimeLimit() throws Exception {
    Upstream upstream = new Upstream();
    ResponseRelay.Capture capture = ResponseRelay.capture(response(upstream), false, CaptureDeadline.NONE);
    ResponseRelay relay = capture.relay();
    relay.onNext(List.of(bytes("ab")));
    assertEquals(2, upstream.requested.get(), "the capture pulls one item at a time");
    relay.stopCapturing(); // its time limit: the second request is still outstanding
    capture.captured().get(5, TimeUnit.SECONDS);

    HttpResponse.BodySubscriber<InputStream> subscriber = BodySubscribers.ofInputStream();
    CompletableFuture<InputStream> body = relay.attach(subscriber);
    relay.onNext(List.of(bytes("cd"))); // the outstanding item arrives (the JDK's thread)
    relay.onComplete();

    try (InputStream in = body.get(5, TimeUnit.SECONDS)) {
      assertEquals("abcd", new String(in.readAllBytes(), StandardCharsets.US_ASCII),
          "the whole body, as the plain JDK client would give it");
    }
  }

  @Test
  void aSubscriberThatAskedForOneItemGetsOne() throws Exception {
    Upstream upstream = new Upstream();
    ResponseRelay.Capture capture = ResponseRelay.capture(response(upstream), false, CaptureDeadline.NONE);
    ResponseRelay relay = capture.relay();
    relay.onNext(List.of(bytes("ab")));
    relay.stopCapturing(); // its time limit: the second request is still outstanding
    capture.captured().get(5, TimeUnit.SECONDS);

    AtomicLong items = new AtomicLong();
    relay.attach(new HttpResponse.BodySubscriber<Void>() {
      @Override
      public java.util.concurrent.CompletionStage<Void> getBody() {
        return new CompletableFuture<>();
      }

      @Override
      public void onSubscribe(Flow.Subscription s) {
        s.request(1); // one item, and nothing more until it is read
      }

      @Override
      public void onNext(List<ByteBuffer> item) {
        items.incrementAndGet();
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onComplete() {}
    });
    relay.onNext(List.of(bytes("cd"))); // the outstanding item arrives (the JDK's thread)

    assertEquals(1, items.get(), "onNext calls for a demand of 1 (Reactive Streams rule 1.1)");
  }
}
