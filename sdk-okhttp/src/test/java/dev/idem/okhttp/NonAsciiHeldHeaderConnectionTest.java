package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The connections of keyed attempts whose answer carries a held-back header with a non-ASCII
 * value (see {@code RvRhttpNonAsciiLocationRedirectTest}): putting the header back used to throw
 * after the answer arrived, and nobody closed that response, so every attempt left its connection
 * in use (its body unread) and the next one opened another. Each attempt's response is now closed before the next
 * attempt, and the last one by the caller, so one connection serves them all.
 */
class NonAsciiHeldHeaderConnectionTest {
  private final Fixture f = new Fixture();
  private final MockWebServer server = new MockWebServer();

  @AfterEach
  void stop() throws IOException {
    server.close();
  }

  @Test
  void everyAttemptOfA503WithNonAsciiRetryAfterGoesOnTheSameConnection() throws Exception {
    for (int i = 0; i < 3; i++) {
      server.enqueue(new MockResponse.Builder().code(503).addHeaderLenient("Retry-After", "bient\u00f4t")
          .body("{\"error\":\"busy\"}").build());
    }
    server.enqueue(new MockResponse.Builder().code(200).body("ok").build());
    server.start();
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).deadline(Duration.ofMinutes(5)).build()).build()).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request request = new Request.Builder().url(server.url("/orders"))
        .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

    String answer;
    try (Response r = client.newCall(request).execute()) {
      answer = r.code() + " " + r.header("Retry-After");
    } catch (IOException e) {
      answer = "threw " + e;
    }
    // An untagged call afterwards: the pool's connection is free again.
    String health;
    try (Response r = client.newCall(new Request.Builder().url(server.url("/health")).build()).execute()) {
      health = r.body().string();
    }

    List<Integer> connections = new ArrayList<>();
    for (RecordedRequest r = server.takeRequest(1, TimeUnit.SECONDS); r != null; r = server.takeRequest(1, TimeUnit.SECONDS)) {
      connections.add(r.getConnectionIndex());
    }
    assertEquals(List.of(0, 0, 0, 0), connections, "one connection for the three attempts and the call after them");
    assertEquals("ok", health);
    assertEquals("503 bient\u00f4t", answer, "the last 503, with the held header the caller's again");
    assertEquals(OperationState.FAILED, f.record(op).state());
  }
}
