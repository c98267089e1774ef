package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Review (jdkhttp): an enqueued request's {@code timeout()} is silently dropped. The app builds the
 * request with {@code .timeout(500 ms)} and calls {@code client.operation(name).enqueue(request)};
 * the delivery goes through {@code client.resumeTransport(headers, null)}, exactly as the queued
 * delivery snippet in docs/client.md writes it. The journaled snapshot has no timeout and the
 * transport adds none, and the default retry policy has no attemptTimeout, so an attempt to a
 * target that accepts the connection and never answers (a hung upstream behind a load balancer)
 * waits forever: the delivery never ends, its lane and lease are held, and the operation is never
 * retried with its key. The same request sent live ({@code send}) times out after 500 ms and is
 * retried.
 */
class ReviewEnqueuedTimeoutDroppedTest {
  @Test
  void anEnqueuedRequestsTimeoutBoundsItsDeliveryAttempts() throws Exception {
    try (EndlessBodyServer server = new EndlessBodyServer(0, false)) { // connection 0 never answers
      Fixture f = new Fixture();
      HttpRequest request = HttpRequest.newBuilder(server.url("/orders"))
          .header("Content-Type", "application/json")
          .timeout(Duration.ofMillis(500))
          .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A-1\"}")).build();
      OperationId id = f.client.operation("create-order").enqueue(request);

      // As docs/client.md "Queued delivery with java.net.http" registers it.
      CompletableFuture<Outcome> resumed = f.executor.resumeAsync(id, f.client.resumeTransport(r -> Map.of(), null));
      assertTrue(server.received.await(5, TimeUnit.SECONDS), "the first attempt reached the server");

      Outcome outcome = f.await(resumed); // fails after 15 s: the first attempt never ends
      assertEquals(201, outcome.response().status());
      assertEquals(OperationState.SUCCEEDED, f.record(id).state());
      assertEquals(2, server.connections.get(), "one timed-out attempt (the request's 500 ms), then one answered");
      assertEquals(java.util.List.of(id.key().value(), id.key().value()), server.keys,
          "both attempts carry the operation's key");
      assertEquals(2, f.record(id).attempts().size(), "the timed-out attempt is journaled, then the answered one");
    }
  }
}
