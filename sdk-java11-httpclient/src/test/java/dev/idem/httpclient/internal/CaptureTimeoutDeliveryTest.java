package dev.idem.httpclient.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A capture's timeout whose delivery fails must still end the call, with the failure in its
 * error: it used to be lost, and the keyed {@code send} waited for ever (and {@code sendAsync}'s
 * future never completed), although the bound had passed. Two ways it failed: no thread could
 * take the delivery (the pool refused it, or the JVM could make no more threads: thrown on the
 * JDK's timer thread, where nobody saw it), and the publisher's {@code cancel} threw before the
 * capture was failed. Now the capture fails first and its cancel runs after, elsewhere. The bound is 1 ns, so it passes at once (even before the publisher is
 * subscribed to); the get's timeout only ends a failing run.
 */
class CaptureTimeoutDeliveryTest {
  private static final BodyCapture.Bound AT_ONCE = new BodyCapture.Bound(Duration.ofNanos(1), "the test's bound");

  @Test
  void aTimeoutNoThreadTakesStillFailsTheCaptureNamingWhy() {
    RejectedExecutionException refused = new RejectedExecutionException("no thread for the delivery");
    CompletableFuture<byte[]> capture = BodyCapture.capture(stalled(() -> { }, new CountDownLatch(1)), 1024, AT_ONCE, task -> {
      throw refused;
    });
    ExecutionException e = assertThrows(ExecutionException.class, () -> capture.get(30, TimeUnit.SECONDS));
    assertInstanceOf(HttpTimeoutException.class, e.getCause());
    assertSame(refused, e.getCause().getCause(), "the error names why the timeout came on the timer's thread");
  }

  @Test
  void aTimeoutFailsTheCaptureBeforeItsCancelRunsAndACancelThatThrowsChangesNothing() throws Exception {
    IllegalStateException cancelFailed = new IllegalStateException("the publisher's cancel failed");
    CountDownLatch subscribed = new CountDownLatch(1);
    // Takes the cancel and runs it only when the test says: the capture must not wait for it.
    BlockingQueue<Runnable> queued = new LinkedBlockingQueue<>();
    CompletableFuture<byte[]> capture = BodyCapture.capture(stalled(() -> {
      throw cancelFailed;
    }, subscribed), 1024, AT_ONCE, queued::add);
    ExecutionException e = assertThrows(ExecutionException.class, () -> capture.get(30, TimeUnit.SECONDS));
    assertInstanceOf(HttpTimeoutException.class, e.getCause(), "failed with its timeout, its cancel not yet run");
    // capture() subscribed on this thread, so the cancel finds the subscription (which onSubscribe
    // cancelled itself, throwing, if the bound passed before the subscribe).
    Runnable cancel = queued.poll(30, TimeUnit.SECONDS);
    assertNotNull(cancel, "the publisher's cancel was handed over");
    assertDoesNotThrow(cancel::run, "a cancel that throws is logged, on the cancelling thread");
    assertInstanceOf(HttpTimeoutException.class, assertThrows(ExecutionException.class, capture::get).getCause());
  }

  /**
   * A request whose publisher subscribes, counts {@code subscribed} down, and never publishes; its
   * cancel runs {@code onCancel}.
   */
  private static HttpRequest stalled(Runnable onCancel, CountDownLatch subscribed) {
    Flow.Publisher<ByteBuffer> silent = s -> {
      s.onSubscribe(new Flow.Subscription() {
        @Override
        public void request(long n) { }

        @Override
        public void cancel() {
          onCancel.run();
        }
      });
      subscribed.countDown();
    };
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/orders"))
        .POST(HttpRequest.BodyPublishers.fromPublisher(silent, 13))
        .build();
  }
}
