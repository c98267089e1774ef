package dev.idem.examples.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.httpclient.IdempotentHttpClient;
import dev.idem.httpclient.IdempotentHttpResponse;
import dev.idem.httpclient.OperationCall;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotencyResult;
import dev.idem.okhttp.IdempotentOperation;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Both halves are Idem: Idem's clients (OkHttp and java.net.http) against the test kit's server,
 * which runs on Idem's server guard, under every fault the test kit can script. For each: exactly
 * one effect for the key, the same key on every request, and, wherever the effect ran on a request
 * whose answer the client never got, the resend is answered with the stored result as a replay.
 */
class BothHalvesEndToEndTest {
  private static final String ORDER = "{\"cart\":\"c-1\",\"amount\":4200}";
  private static final RetryPolicy FAST = RetryPolicy.builder()
      .maxAttempts(5)
      .baseDelay(Duration.ofMillis(10))
      .maxDelay(Duration.ofMillis(50))
      .deadline(Duration.ofSeconds(20))
      .build();

  static Stream<FaultCase> faults() {
    return FaultCase.all().stream();
  }

  private static IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(new InMemoryJournal()).retryPolicy(FAST).build();
  }

  @ParameterizedTest(name = "OkHttp, {0}")
  @MethodSource("faults")
  void okHttp(FaultCase c) throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      OkHttpClient client = new OkHttpClient.Builder()
          .addInterceptor(IdemOkHttp.builder(executor()).build().interceptor())
          .retryOnConnectionFailure(false)
          .readTimeout(FaultCase.CLIENT_TIMEOUT)
          .build();
      IdempotentOperation op = IdempotentOperation.of("create-order").withReference("c-1");
      String key = op.key().value();
      if (c.fault() != null) {
        server.plan().forKey(key, c.fault());
      }
      Request request = new Request.Builder().url(server.url("/orders").toString())
          .post(RequestBody.create(ORDER, MediaType.get("application/json")))
          .tag(IdempotentOperation.class, op).build();
      int status;
      String body;
      IdempotencyResult result;
      try (Response response = client.newCall(request).execute()) {
        status = response.code();
        body = response.body().string();
        result = IdempotencyResult.of(response).orElseThrow();
      }
      check(c, server, key, status, body, result.state(), result.replayed());
    }
  }

  @ParameterizedTest(name = "java.net.http, {0}")
  @MethodSource("faults")
  void javaHttpClient(FaultCase c) throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      IdempotentHttpClient client = IdempotentHttpClient.builder(HttpClient.newHttpClient())
          .idempotentExecutor(executor()).build();
      OperationCall call = client.operation("create-order").reference("c-1");
      String key = call.key().value();
      if (c.fault() != null) {
        server.plan().forKey(key, c.fault());
      }
      HttpRequest request = HttpRequest.newBuilder(server.url("/orders"))
          .timeout(FaultCase.CLIENT_TIMEOUT)
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(ORDER)).build();
      IdempotentHttpResponse<String> response = call.send(request, BodyHandlers.ofString());
      check(c, server, key, response.statusCode(), response.body(), response.state(), response.replayed());
    }
  }

  private static void check(FaultCase c, IdempotentServer server, String key, int status, String body,
      OperationState state, boolean replayed) throws Exception {
    assertTrue(server.awaitEffects(key, 1, Duration.ofSeconds(10)), "the effect settled");
    assertEquals(1, server.effectCount(key), "exactly one effect for the key");
    assertEquals(1, server.totalEffects(), "and none under any other key");
    List<ReceivedRequest> received = server.recordedRequests();
    assertEquals(c.requests(), received.size(), "requests: " + received);
    received.forEach(r -> assertEquals(key, r.keyHeader().orElse(null), "the same key on every request"));
    assertEquals(201, status, body);
    assertEquals(OperationState.SUCCEEDED, state);
    assertEquals(c.replayedAtEnd(), replayed, "a replay on the resend exactly when the effect ran before it");
    assertTrue(body.contains("\"effect\":1") && body.contains(key), "the one order, whichever request returned it: " + body);
  }
}
