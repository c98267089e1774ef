package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import java.net.CookieHandler;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
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

  /**
   * The same, once the status line and headers are in: Idem reads an error body (up to its cap)
   * for the journal, and with no timeout that read waits as long as the server stalls. The
   * JDK's exchange has handed its response over by then, so cancelling it stops nothing: the read
   * itself must stop.
   */
  @Test
  void cancellingWhileTheErrorBodyIsReadForTheJournalStopsTheRead() throws Exception {
    try (EndlessBodyServer server = EndlessBodyServer.stallingAfter(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n")) {
      // The JDK client hands response headers to its cookie handler as they arrive: the test's
      // signal that the attempt is past its exchange, reading the body.
      CountDownLatch headersIn = new CountDownLatch(1);
      HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
          .cookieHandler(new CookieHandler() {
            @Override
            public Map<String, List<String>> get(URI uri, Map<String, List<String>> headers) {
              return Map.of();
            }

            @Override
            public void put(URI uri, Map<String, List<String>> headers) {
              headersIn.countDown();
            }
          }).build();
      Fixture f = new Fixture();
      IdempotentHttpClient client = IdempotentHttpClient.builder(jdk).idempotentExecutor(f.executor).build();
      OperationCall call = client.operation("create-order");
      OperationId id = call.operationId();
      CompletableFuture<IdempotentHttpResponse<String>> future =
          call.sendAsync(withoutTimeout(server.url("/orders")), BodyHandlers.ofString());
      // (A cancel in the instant between this and the JDK handing the response over would still
      // reach the exchange: it could only make this test pass without the fix, never fail with it.)
      assertTrue(headersIn.await(5, TimeUnit.SECONDS), "the 503's headers arrived");

      assertTrue(future.cancel(true));

      assertTrue(server.clientClosed.await(5, TimeUnit.SECONDS),
          "5 s after the cancel, Idem still reads the stalled body for the journal");
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (f.record(id).state() != OperationState.PENDING && System.nanoTime() < end) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
      assertEquals(OperationState.PENDING, f.record(id).state());
      assertEquals(1, f.record(id).attempts().size(), "the cancelled attempt, recorded as ambiguous");
      assertTrue(f.record(id).attempts().get(0).mayHaveTakenEffect());
    }
  }
}
