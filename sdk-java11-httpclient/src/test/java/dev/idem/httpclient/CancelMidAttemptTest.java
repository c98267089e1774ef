package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * {@link OperationCall#sendAsync}: "cancelling it stops further attempts and leaves the operation
 * PENDING". Cancelled while an attempt waits for a server that does not answer (no request
 * timeout, no attemptTimeout: the defaults), the attempt's JDK exchange is never cancelled: the
 * connection stays open for as long as the server likes, and the operation stays IN_FLIGHT, not
 * PENDING, all that time (the executor records the attempt only "when it ends"). The JDK client's
 * own {@code cancel(true)} closes the exchange, and the OkHttp adapter's {@code cancel()} cancels
 * the attempt's call.
 *
 * <p>Found by a review on 2026-12-04.
 */
class CancelMidAttemptTest {

  private static HttpRequest withoutTimeout(URI url) {
    return HttpRequest.newBuilder(url)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A-1\"}"))
        .build();
  }

  @Test
  void theJdkClientsOwnCancelClosesTheExchange() throws Exception {
    try (EndlessBodyServer server = new EndlessBodyServer(0, false)) {
      CompletableFuture<HttpResponse<String>> f =
          Fixture.JDK.sendAsync(withoutTimeout(server.url("/orders")), BodyHandlers.ofString());
      assertTrue(server.received.await(5, TimeUnit.SECONDS));
      f.cancel(true);
      assertTrue(server.clientClosed.await(5, TimeUnit.SECONDS), "the baseline: the JDK client closes it");
    }
  }

  @Test
  void cancellingMidAttemptStopsTheExchangeAndLeavesTheOperationPending() throws Exception {
    try (EndlessBodyServer server = new EndlessBodyServer(0, false)) { // connection 0 never answers
      Fixture f = new Fixture();
      OperationCall call = f.client.operation("create-order");
      OperationId id = call.operationId();
      CompletableFuture<IdempotentHttpResponse<String>> future =
          call.sendAsync(withoutTimeout(server.url("/orders")), BodyHandlers.ofString());
      assertTrue(server.received.await(5, TimeUnit.SECONDS), "the attempt reached the server");

      assertTrue(future.cancel(true));

      boolean closed = server.clientClosed.await(5, TimeUnit.SECONDS);
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
      while (f.record(id).state() != OperationState.PENDING && System.nanoTime() < end) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
      assertEquals(OperationState.PENDING, f.record(id).state(),
          "5 s after the cancel, the operation the Javadoc leaves PENDING is still held IN_FLIGHT");
      assertTrue(closed, "5 s after the cancel, the abandoned attempt's exchange is still open");
    }
  }
}
