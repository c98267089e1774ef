package dev.idem.httpclient.internal;

import static dev.idem.httpclient.internal.RelayFixtures.bytes;
import static dev.idem.httpclient.internal.RelayFixtures.response;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.adapter.CaptureDeadline;
import dev.idem.httpclient.internal.RelayFixtures.Upstream;
import java.net.http.HttpResponse.BodySubscriber;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A capture stopped at its time limit while its one-item request was still outstanding at the
 * wire: that item may arrive (on the JDK's thread) just as the caller's subscriber is being handed
 * the prefix (on the caller's thread). It must reach the subscriber after the prefix, never beside
 * it: Reactive Streams rule 1.3 (signals in series) and the body's byte order. It used to go to the
 * subscriber at once, while the prefix's onNext still ran, and so ahead of the prefix's bytes.
 *
 * <p>Deterministic: the subscriber's onNext of the prefix waits (bounded) while the test delivers
 * the late item from its own thread, the JDK's part.
 */
class PrefixThenLiveOrderTest {

  @Test
  void anItemArrivingAsThePrefixIsHandedOverComesAfterIt() throws Exception {
    Upstream upstream = new Upstream();
    ResponseRelay.Capture capture = ResponseRelay.capture(response(upstream), false, CaptureDeadline.NONE);
    ResponseRelay relay = capture.relay();
    relay.onNext(List.of(bytes("ab")));
    assertEquals(2, upstream.requested.get(), "the capture pulls one item at a time");
    relay.stopCapturing(); // its time limit: the second request is still outstanding
    capture.captured().get(5, TimeUnit.SECONDS);

    Recording subscriber = new Recording();
    Thread caller = new Thread(() -> relay.attach(subscriber), "caller");
    caller.start();
    assertTrue(subscriber.inFirst.await(5, TimeUnit.SECONDS), "the prefix reached the subscriber");
    relay.onNext(List.of(bytes("cd"))); // the outstanding item, on the JDK's thread
    subscriber.releaseFirst.countDown();
    caller.join(5_000);
    relay.onComplete();

    assertFalse(subscriber.overlapped.get(), "onNext ran on two threads at once (rule 1.3)");
    assertEquals("abcd", subscriber.body.getNow("(no body)"), "the body's bytes in order");
  }

  /** Records the bytes; its first onNext waits for the test; notes an onNext beside another. */
  private static final class Recording implements BodySubscriber<String> {
    final CountDownLatch inFirst = new CountDownLatch(1);
    final CountDownLatch releaseFirst = new CountDownLatch(1);
    final AtomicBoolean inside = new AtomicBoolean();
    final AtomicBoolean overlapped = new AtomicBoolean();
    final CompletableFuture<String> body = new CompletableFuture<>();
    final StringBuilder seen = new StringBuilder();
    int items;

    @Override
    public CompletionStage<String> getBody() {
      return body;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(List<ByteBuffer> item) {
      if (!inside.compareAndSet(false, true)) {
        overlapped.set(true);
      }
      try {
        if (++items == 1) {
          inFirst.countDown();
          // Bounded: with the defect, the late item is handed over beside this call and returns.
          releaseFirst.await(2, TimeUnit.SECONDS);
        }
        synchronized (seen) {
          for (ByteBuffer b : item) {
            seen.append(StandardCharsets.US_ASCII.decode(b.duplicate()));
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        inside.set(false);
      }
    }

    @Override
    public void onError(Throwable t) {
      body.completeExceptionally(t);
    }

    @Override
    public void onComplete() {
      synchronized (seen) {
        body.complete(seen.toString());
      }
    }
  }
}
