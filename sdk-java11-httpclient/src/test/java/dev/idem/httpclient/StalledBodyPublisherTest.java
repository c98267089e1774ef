package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A request body that stalls (an upload forwarded from a client that went quiet, a pipe whose
 * writer hangs) with {@code request.timeout(300 ms)}. The JDK client's timeout covers the request
 * until its response headers, body publishing included: its future fails with
 * {@link HttpTimeoutException}. Idem reads the publisher for the journal before any attempt, and
 * nothing bounds that read: neither the request's timeout, nor the retry policy's deadline or
 * attemptTimeout. The keyed {@code sendAsync} future never completes (and {@code send} blocks its
 * thread forever), although nothing was journaled or sent.
 *
 * <p>Real time: a 300 ms request timeout; the bound asserted is 5 s.
 */
class StalledBodyPublisherTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  /** Subscribes, never publishes a byte, never completes. */
  private static HttpRequest stalled(URI url) {
    Flow.Publisher<ByteBuffer> silent = s -> s.onSubscribe(new Flow.Subscription() {
      @Override
      public void request(long n) { }

      @Override
      public void cancel() { }
    });
    return HttpRequest.newBuilder(url)
        .header("Content-Type", "application/json")
        .timeout(Duration.ofMillis(300))
        .POST(HttpRequest.BodyPublishers.fromPublisher(silent, 13))
        .build();
  }

  @Test
  void theJdkClientTimesTheStalledBodyOut() throws Exception {
    IdempotentServer server = serverExtension.server();
    CompletableFuture<?> f = Fixture.JDK.sendAsync(stalled(server.url("/orders")), BodyHandlers.ofString());
    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof HttpTimeoutException, "the baseline: " + e.getCause());
  }

  @Test
  void aKeyedCallWithAStalledBodyEndsWithinTheRequestTimeoutToo() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    OperationCall call = f.client.operation("create-order");
    CompletableFuture<IdempotentHttpResponse<String>> future =
        call.sendAsync(stalled(server.url("/orders")), BodyHandlers.ofString());
    try {
      future.get(5, TimeUnit.SECONDS);
    } catch (ExecutionException expected) {
      assertEquals(0, server.requestCount(), "nothing of the stalled request reached the server");
      assertTrue(f.executor.find(call.operationId()).isEmpty(), "nothing was journaled");
      return;
    } catch (TimeoutException hung) {
      future.cancel(true);
      throw new AssertionError("5 s after a request with a 300 ms timeout, the keyed sendAsync future has not"
          + " completed: Idem's read of the stalled body publisher for the journal has no bound", hung);
    }
    throw new AssertionError("a request whose body never arrived completed normally");
  }
}
