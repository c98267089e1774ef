package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A capture's timeout is delivered on at most max(2, processors) threads per client, and the
 * delivery calls the app's publisher's {@code Subscription.cancel}: foreign code (BodyCapture says
 * so itself). Before the cap a cancel that blocks (one that closes a stream another thread is
 * stuck reading, one that takes the lock its blocking {@code request} holds) held only its own
 * thread; now that many such cancels hold every delivery thread, and an unrelated call's timeout
 * waits in the queue behind them: its {@code sendAsync} future never completes, although its bound
 * passed long ago. CaptureThreads' Javadoc claims "the wait is short and cannot become a deadlock
 * because a delivery runs no app code".
 */
class CaptureTimeoutBehindSlowCancelsTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @Test
  void aCallsTimeoutIsNotHeldBehindOtherCallsBlockedCancels() throws Exception {
    IdempotentServer server = serverExtension.server();
    int threads = Math.max(2, Runtime.getRuntime().availableProcessors());
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch cancelling = new CountDownLatch(threads);
    Fixture f = new Fixture();
    List<CompletableFuture<IdempotentHttpResponse<String>>> stuck = new ArrayList<>();
    try {
      for (int i = 0; i < threads; i++) {
        // Publishes nothing; its cancel blocks when it comes from Idem's delivery thread.
        Flow.Publisher<ByteBuffer> slowCancel = s -> s.onSubscribe(new Flow.Subscription() {
          @Override
          public void request(long n) { }

          @Override
          public void cancel() {
            if (Thread.currentThread().getName().startsWith("idem-httpclient-body-")) {
              cancelling.countDown();
              try {
                release.await(60, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
          }
        });
        stuck.add(f.client.operation("slow-cancel-" + i).sendAsync(request(server, slowCancel), BodyHandlers.ofString()));
      }
      if (!cancelling.await(30, TimeUnit.SECONDS)) {
        fail("the stalled calls' timeouts were never delivered");
      }

      Flow.Publisher<ByteBuffer> silent = s -> s.onSubscribe(new Flow.Subscription() {
        @Override
        public void request(long n) { }

        @Override
        public void cancel() { }
      });
      CompletableFuture<IdempotentHttpResponse<String>> unrelated =
          f.client.operation("create-order").sendAsync(request(server, silent), BodyHandlers.ofString());
      try {
        unrelated.get(10, TimeUnit.SECONDS);
        fail("the call with a silent publisher succeeded");
      } catch (ExecutionException e) {
        assertInstanceOf(HttpTimeoutException.class, e.getCause(), "the call fails with its capture's timeout");
      } catch (TimeoutException e) {
        fail("a sendAsync whose body bound (50 ms) passed 10 s ago never completed: its timeout waits behind "
            + threads + " other calls' blocked Subscription.cancel, on the capped idem-httpclient-body-* threads");
      }
      assertEquals(0, server.requestCount(), "nothing was sent");
    } finally {
      release.countDown();
    }
  }

  private static HttpRequest request(IdempotentServer server, Flow.Publisher<ByteBuffer> body) {
    return HttpRequest.newBuilder(URI.create(server.url("/orders").toString()))
        .timeout(Duration.ofMillis(50))
        .POST(HttpRequest.BodyPublishers.fromPublisher(body, 13))
        .build();
  }
}
