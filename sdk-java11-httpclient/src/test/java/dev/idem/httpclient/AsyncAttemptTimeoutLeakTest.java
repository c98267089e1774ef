package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.RetryPolicy;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An attempt that outlives the retry policy's attemptTimeout is abandoned and the operation is
 * retried with the same key. The abandoned exchange must be stopped: on the sync path the timer's
 * interrupt makes java.net.http cancel it (the connection is closed); on sendAsync nothing cancels
 * the JDK's future, so the abandoned request keeps its connection open for as long as the server
 * likes (forever, with no request timeout).
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class AsyncAttemptTimeoutLeakTest {
  @ParameterizedTest
  @EnumSource(Mode.class)
  void theTimedOutAttemptsExchangeIsCancelled(Mode mode) throws Exception {
    // The first connection reads its request and never answers; the others answer 201.
    try (EndlessBodyServer server = new EndlessBodyServer(0, false)) {
      IdempotentHttpClient client = IdempotentHttpClient.builder(Fixture.JDK)
          .idempotentExecutor(IdempotentExecutor.builder().journal(new InMemoryJournal())
              .retryPolicy(RetryPolicy.builder().maxAttempts(3).baseDelay(Duration.ofMillis(10))
                  .attemptTimeout(Duration.ofMillis(500)).build())
              .build())
          .build();
      HttpRequest request = HttpRequest.newBuilder(server.url("/orders")) // no request timeout
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A-1\"}")).build();
      OperationCall call = client.operation("create-order");
      HttpResponse<String> r = mode == Mode.SYNC
          ? call.send(request, BodyHandlers.ofString())
          : call.sendAsync(request, BodyHandlers.ofString()).get(10, TimeUnit.SECONDS);
      assertEquals(201, r.statusCode());
      assertEquals(2, server.connections.get());
      assertTrue(server.clientClosed.await(5, TimeUnit.SECONDS),
          mode + ": the exchange of the timed-out attempt is still open 5 s after the operation settled");
    }
  }
}
