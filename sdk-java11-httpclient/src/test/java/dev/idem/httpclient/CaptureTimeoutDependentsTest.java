package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the app chains on a keyed {@code sendAsync} whose body publisher stalled past its bound ran
 * on the thread that delivered the timeout, one of Idem's {@code idem-httpclient-body-*}: app code
 * that blocks there (a join on another call) holds the thread that other calls' timeouts need, so
 * with those threads capped, calls could wait on each other for good. The JDK's {@code sendAsync}
 * runs its dependents on the default async pool; so does Idem's now, for a capture that fails off
 * the caller's thread. The bound is 1 ns, so it passes at once (before the publisher is even
 * subscribed to); the request holds the delivery (which names it in the timeout's message) until
 * the test has chained its dependent, so that the dependent cannot run on the test's thread.
 */
class CaptureTimeoutDependentsTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @Test
  void theAppsDependentsOfATimedOutSendAsyncRunOffIdemsTimeoutThreads() throws Exception {
    IdempotentServer server = serverExtension.server();
    CountDownLatch chained = new CountDownLatch(1);
    Flow.Publisher<ByteBuffer> silent = s -> s.onSubscribe(new Flow.Subscription() {
      @Override
      public void request(long n) { }

      @Override
      public void cancel() { }
    });
    HttpRequest request = heldOffTheTestThread(HttpRequest.newBuilder(URI.create(server.url("/orders").toString()))
        .timeout(Duration.ofNanos(1))
        .POST(HttpRequest.BodyPublishers.fromPublisher(silent, 13))
        .build(), Thread.currentThread(), chained);
    Fixture f = new Fixture();

    CompletableFuture<IdempotentHttpResponse<String>> future =
        f.client.operation("create-order").sendAsync(request, BodyHandlers.ofString());
    CompletableFuture<String> dependent = future.handle((r, e) -> {
      assertInstanceOf(HttpTimeoutException.class, e, "the call fails with the capture's timeout");
      return Thread.currentThread().getName();
    });
    chained.countDown();

    String thread = dependent.get(30, TimeUnit.SECONDS);
    assertFalse(thread.startsWith("idem-httpclient-body-"), "the app's dependent ran on " + thread);
    assertEquals(0, server.requestCount(), "nothing was sent");
  }

  /** {@code request}, whose method waits for {@code released} when asked on a thread other than {@code test}. */
  private static HttpRequest heldOffTheTestThread(HttpRequest request, Thread test, CountDownLatch released) {
    return new HttpRequest() {
      @Override
      public Optional<BodyPublisher> bodyPublisher() {
        return request.bodyPublisher();
      }

      @Override
      public String method() {
        if (Thread.currentThread() != test) {
          try {
            released.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return request.method();
      }

      @Override
      public Optional<Duration> timeout() {
        return request.timeout();
      }

      @Override
      public boolean expectContinue() {
        return request.expectContinue();
      }

      @Override
      public URI uri() {
        return request.uri();
      }

      @Override
      public Optional<HttpClient.Version> version() {
        return request.version();
      }

      @Override
      public HttpHeaders headers() {
        return request.headers();
      }
    };
  }
}
