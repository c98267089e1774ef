package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What bounds Idem's read of a request body for the journal, which happens before the operation
 * begins: the request's {@code timeout} (as in the JDK client, whose timeout covers body
 * publishing), else the retry policy's {@code attemptTimeout}, else its {@code deadline}. Past
 * it the call fails with {@link HttpTimeoutException}, the publisher's subscription cancelled,
 * nothing journaled or sent; on {@code send} and {@code sendAsync} alike.
 *
 * <p>Real time: the JDK's timer, with bounds of 200 ms; the bound asserted is 5 s.
 */
class CaptureBoundTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  /**
   * Subscribes, never publishes, and records whether it was cancelled. A latch, not a flag: the
   * call fails first, on the timer thread, and the cancel is handed to a thread of its own
   * (BodyCapture.timeOut), so it may land just after the caller has seen the failure.
   */
  private static final class Silent implements Flow.Publisher<ByteBuffer> {
    final CountDownLatch cancelled = new CountDownLatch(1);

    @Override
    public void subscribe(Flow.Subscriber<? super ByteBuffer> s) {
      s.onSubscribe(new Flow.Subscription() {
        @Override
        public void request(long n) { }

        @Override
        public void cancel() {
          cancelled.countDown();
        }
      });
    }
  }

  private static HttpRequest.Builder post(URI url, HttpRequest.BodyPublisher body) {
    return HttpRequest.newBuilder(url).header("Content-Type", "application/json").POST(body);
  }

  private static void assertNeverBegan(IdempotentServer server, Fixture f, OperationId id, Throwable e)
      throws Exception {
    HttpTimeoutException timeout = assertInstanceOf(HttpTimeoutException.class, e);
    assertTrue(timeout.getMessage().contains("nothing was journaled or sent"), timeout.getMessage());
    assertEquals(0, server.requestCount(), "nothing sent");
    assertTrue(f.executor.find(id).isEmpty(), "nothing journaled");
  }

  @Test
  void aBlockingSendIsBoundedByTheRequestTimeout() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    Silent silent = new Silent();
    OperationCall call = f.client.operation("create-order");
    HttpRequest request = post(server.url("/orders"), HttpRequest.BodyPublishers.fromPublisher(silent, 13))
        .timeout(Duration.ofMillis(200)).build();
    CompletableFuture<Throwable> thrown = CompletableFuture.supplyAsync(
        () -> assertThrows(Exception.class, () -> call.send(request, BodyHandlers.ofString())));
    Throwable e = thrown.get(5, TimeUnit.SECONDS);
    assertNeverBegan(server, f, call.operationId(), e);
    assertTrue(e.getMessage().contains("the request's timeout"), e.getMessage());
    assertTrue(silent.cancelled.await(5, TimeUnit.SECONDS), "the publisher's subscription is cancelled");
  }

  @Test
  void withoutARequestTimeoutThePolicysAttemptTimeoutBoundsIt() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    Silent silent = new Silent();
    OperationCall call = f.client.operation("create-order")
        .policy(RetryPolicy.builder().attemptTimeout(Duration.ofMillis(200)).build());
    CompletableFuture<IdempotentHttpResponse<String>> future = call.sendAsync(
        post(server.url("/orders"), HttpRequest.BodyPublishers.fromPublisher(silent, 13)).build(),
        BodyHandlers.ofString());
    ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(5, TimeUnit.SECONDS));
    assertNeverBegan(server, f, call.operationId(), e.getCause());
    assertTrue(e.getCause().getMessage().contains("attemptTimeout"), e.getCause().getMessage());
    assertTrue(silent.cancelled.await(5, TimeUnit.SECONDS), "the publisher's subscription is cancelled");
  }

  @Test
  void withNeitherThePolicysDeadlineBoundsIt() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    OperationCall call = f.client.operation("create-order")
        .policy(RetryPolicy.builder().deadline(Duration.ofMillis(200)).build());
    CompletableFuture<IdempotentHttpResponse<String>> future = call.sendAsync(
        post(server.url("/orders"), HttpRequest.BodyPublishers.fromPublisher(new Silent(), 13)).build(),
        BodyHandlers.ofString());
    ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(5, TimeUnit.SECONDS));
    assertNeverBegan(server, f, call.operationId(), e.getCause());
    assertTrue(e.getCause().getMessage().contains("deadline"), e.getCause().getMessage());
  }

  @Test
  void aStreamBlockedInItsReadFailsTheAsyncCallOnTime() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    CountDownLatch never = new CountDownLatch(1);
    OperationCall call = f.client.operation("create-order");
    HttpRequest request = post(server.url("/orders"), HttpRequest.BodyPublishers.ofInputStream(() -> new InputStream() {
      @Override
      public int read() {
        try {
          never.await(10, TimeUnit.SECONDS); // a pipe whose writer hangs
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return -1;
      }
    })).timeout(Duration.ofMillis(200)).build();
    try {
      CompletableFuture<IdempotentHttpResponse<String>> future = call.sendAsync(request, BodyHandlers.ofString());
      ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(5, TimeUnit.SECONDS));
      assertNeverBegan(server, f, call.operationId(), e.getCause());
    } finally {
      never.countDown(); // frees the thread the read holds
    }
  }
}
