package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * {@code sendAsync}'s future completes when the caller's body handler has the body (for
 * {@code ofString}, when the body ends). Cancelling the JDK client's own future while the body
 * streams stops the exchange and closes the connection. Cancelling Idem's future once the
 * operation has settled does nothing of the kind: the final response's body stays attached to the
 * caller's subscriber, which nobody will ever read, and goes on pulling from the server (here an
 * endless body: forever, buffering as it goes).
 *
 * <p>Found by a review on 2026-12-04.
 */
class CancelWhileBodyStreamsLeakTest {

  /** No request timeout: nothing but the cancel may end the exchange within the test's wait. */
  private static HttpRequest withoutTimeout(URI url) {
    return HttpRequest.newBuilder(url)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A-1\"}"))
        .build();
  }

  @Test
  void theJdkClientsOwnCancelStopsTheBody() throws Exception {
    try (EndlessBodyServer server = new EndlessBodyServer()) {
      HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      CompletableFuture<HttpResponse<String>> f =
          jdk.sendAsync(withoutTimeout(server.url("/orders")), BodyHandlers.ofString());
      assertTrue(server.bodyStarted.await(5, TimeUnit.SECONDS));
      f.cancel(true);
      assertTrue(server.clientClosed.await(5, TimeUnit.SECONDS), "the baseline: the JDK client closes it");
    }
  }

  @Test
  void cancellingIdemsFutureWhileTheFinalBodyStreamsStopsTheBody() throws Exception {
    try (EndlessBodyServer server = new EndlessBodyServer()) {
      Fixture f = new Fixture();
      OperationCall call = f.client.operation("create-order");
      OperationId id = call.operationId();
      CompletableFuture<IdempotentHttpResponse<String>> future =
          call.sendAsync(withoutTimeout(server.url("/orders")), BodyHandlers.ofString());
      assertTrue(server.bodyStarted.await(5, TimeUnit.SECONDS));
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (f.record(id).state() != OperationState.SUCCEEDED && System.nanoTime() < end) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
      assertEquals(OperationState.SUCCEEDED, f.record(id).state(), "settled on its 200");
      assertFalse(future.isDone(), "the body handler is still reading the endless body");

      assertTrue(future.cancel(true));
      assertTrue(server.clientClosed.await(5, TimeUnit.SECONDS),
          "5 s after the cancel, the body of the final response is still being read, with no one to read it");
    }
  }

  /**
   * The blocking twin: {@code send} interrupted while the handler reads the final body. The JDK's
   * own {@code send} cancels its exchange when interrupted; Idem's used to throw the
   * InterruptedException and leave the body streaming into the handler nobody waits for.
   */
  @Test
  void interruptingSendWhileTheFinalBodyStreamsStopsTheBody() throws Exception {
    try (EndlessBodyServer server = new EndlessBodyServer()) {
      Fixture f = new Fixture();
      OperationCall call = f.client.operation("create-order");
      OperationId id = call.operationId();
      CompletableFuture<Throwable> thrown = new CompletableFuture<>();
      Thread caller = new Thread(() -> {
        try {
          call.send(withoutTimeout(server.url("/orders")), BodyHandlers.ofString());
          thrown.complete(null);
        } catch (Throwable t) {
          thrown.complete(t);
        }
      }, "blocking-caller");
      caller.setDaemon(true);
      caller.start();
      assertTrue(server.bodyStarted.await(5, TimeUnit.SECONDS));
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (f.record(id).state() != OperationState.SUCCEEDED && System.nanoTime() < end) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
      assertEquals(OperationState.SUCCEEDED, f.record(id).state(), "settled on its 200");

      caller.interrupt();

      assertTrue(thrown.get(5, TimeUnit.SECONDS) instanceof InterruptedException, "send reports the interrupt");
      assertTrue(server.clientClosed.await(5, TimeUnit.SECONDS),
          "5 s after the interrupt, the body of the final response is still being read, with no one to read it");
      assertEquals(OperationState.SUCCEEDED, f.record(id).state());
    }
  }
}
