package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.okhttp.internal.OkHttpSnapshots;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A response with several {@code Retry-After} lines (a proxy adding its own beside the server's):
 * OkHttp's {@code Response.header} reads the last, so the app's interceptors and its code read the
 * last one. Idem reads that one too, when it waits before the next attempt and in what it stores,
 * so a replay answers what the live call did.
 */
class RetryAfterLinesTest {
  private final Fixture f = new Fixture();
  private final MockWebServer server = new MockWebServer();

  @AfterEach
  void stop() throws IOException {
    server.close();
  }

  @Test
  void theBackoffWaitsForTheLastRetryAfterAsOkHttpReadsIt() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "1").addHeader("Retry-After", "5")
        .build());
    server.enqueue(new MockResponse.Builder().code(201).body("{\"id\":\"ord_1\"}").build());
    server.start();
    OkHttpClient client = Fixture.client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Instant start = f.time.clock().instant();

    try (Response r = client.newCall(Fixture.order(server.url("/orders").uri(), op)).execute()) {
      assertEquals(201, r.code());
    }

    // The default policy's first backoff is 100 ms here: only the Retry-After floor makes it longer.
    assertEquals(Duration.ofSeconds(5), Duration.between(start, f.time.clock().instant()),
        "waited for the last Retry-After, as OkHttp reads it");
    assertEquals(2, server.getRequestCount());
    RecordedRequest first = server.takeRequest();
    RecordedRequest second = server.takeRequest();
    assertEquals(op.key().value(), first.getHeaders().get("Idempotency-Key"));
    assertEquals(op.key().value(), second.getHeaders().get("Idempotency-Key"));
    assertEquals(OperationState.SUCCEEDED, f.record(op).state());
  }

  @Test
  void theStoredAnswerAndItsReplayHoldTheRetryAfterTheLiveCallRead() throws Exception {
    server.enqueue(new MockResponse.Builder().code(202).addHeader("Retry-After", "1").addHeader("Retry-After", "5")
        .body("{\"status\":\"queued\"}").build());
    server.start();
    OkHttpClient client = Fixture.client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("create-export");
    Request request = Fixture.order(server.url("/exports").uri(), op);

    String live;
    try (Response r = client.newCall(request).execute()) {
      assertEquals(202, r.code());
      live = r.header("Retry-After");
    }

    assertEquals("5", live, "OkHttp reads the last line");
    ResponseSnapshot stored = f.record(op).storedResponse().orElseThrow();
    assertEquals(Optional.of(live), stored.header("Retry-After"), "what Idem and a classifier read");
    assertEquals(List.of(live), stored.headers().get("retry-after"), "one Retry-After, the one that counts");
    Response replay = OkHttpSnapshots.toResponse(stored, request);
    assertEquals(live, replay.header("Retry-After"));
    assertEquals(List.of(live), replay.headers("Retry-After"));
    assertEquals(1, server.getRequestCount());
  }
}
