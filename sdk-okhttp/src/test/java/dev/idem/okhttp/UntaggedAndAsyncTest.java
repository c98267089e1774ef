package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.client;
import static dev.idem.okhttp.Fixture.createdBody;
import static dev.idem.okhttp.Fixture.keysSent;
import static dev.idem.okhttp.Fixture.order;
import static dev.idem.okhttp.Fixture.untaggedPost;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The untagged-request policy, asynchronous calls, and cancellation. */
class UntaggedAndAsyncTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  @Test
  void untaggedPostPassesThroughByDefault() throws Exception {
    server.plan().next(Fault.status(503));
    OkHttpClient client = client(f.idem());
    try (Response r = client.newCall(untaggedPost(server.url("/orders"))).execute()) {
      assertEquals(503, r.code(), "not retried: nothing says this server honours keys");
      assertTrue(IdempotencyResult.of(r).isEmpty());
    }
    assertEquals(1, server.requestCount());
    assertEquals(Optional.empty(), server.recordedRequests().get(0).keyHeader());
    assertTrue(f.allRecords().isEmpty(), "nothing journaled");
  }

  @Test
  void untaggedPostIsRefusedBeforeSendingWhenConfiguredToReject() throws Exception {
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().build()).untaggedPolicy(UntaggedPolicy.REJECT).build();
    OkHttpClient client = client(idem);
    IOException e = assertThrows(IOException.class, () -> client.newCall(untaggedPost(server.url("/orders"))).execute());
    assertTrue(e.getMessage().contains("UntaggedPolicy.REJECT"), e.getMessage());
    assertEquals(0, server.requestCount(), "nothing was sent");
    assertTrue(f.allRecords().isEmpty(), "nothing journaled");
  }

  /**
   * The refusal names the request for a log: a servlet session id in its path ({@code ;jsessionid=},
   * a credential) must not be in it. Before: the raw path was.
   */
  @Test
  void theRejectMessageHoldsNoSessionIdFromThePath() throws Exception {
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().build()).untaggedPolicy(UntaggedPolicy.REJECT).build();
    OkHttpClient client = client(idem);
    IOException e = assertThrows(IOException.class,
        () -> client.newCall(untaggedPost(server.url("/orders;jsessionid=S3SSION-SECRET"))).execute());
    assertTrue(e.getMessage().contains("/orders;jsessionid=redacted"), e.getMessage());
    assertFalse(e.getMessage().contains("S3SSION-SECRET"), e.getMessage());
    assertEquals(0, server.requestCount(), "nothing was sent");
  }

  @Test
  void untaggedPostGetsAFreshKeyWhenConfigured() throws Exception {
    server.plan().next(Fault.status(503));
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().build()).untaggedPolicy(UntaggedPolicy.FRESH_KEY).build();
    OkHttpClient client = client(idem);
    try (Response r = client.newCall(untaggedPost(server.url("/orders"))).execute()) {
      assertEquals(201, r.code());
    }
    List<Optional<String>> keys = keysSent(server);
    assertEquals(2, keys.size());
    assertEquals(keys.get(0), keys.get(1));
    String key = keys.get(0).orElseThrow();
    assertEquals(1, server.effectCount(key));
    OperationRecord rec = f.allRecords().get(0);
    assertEquals("untagged-post", rec.id().operation(), "one naming rule in both adapters");
    assertEquals(key, rec.id().key().value());

    // A second call is another operation with another key; a GET is never touched.
    try (Response r = client.newCall(untaggedPost(server.url("/orders"))).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(2, server.totalEffects());
    try (Response r = client.newCall(new Request.Builder().url(server.url("/orders/1").toString()).build())
        .execute()) {
      assertEquals(201, r.code(), "the reference server runs a keyless GET as it comes");
    }
    assertEquals(Optional.empty(), keysSent(server).get(3), "untagged GET passes through");
    assertEquals(2, f.allRecords().size());
  }

  @Test
  void untaggedPostWithTheAppsOwnKeyHeaderKeepsThatKey() throws Exception {
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().build()).untaggedPolicy(UntaggedPolicy.FRESH_KEY).build();
    server.plan().next(Fault.commitThenDropResponse());
    Request request = untaggedPost(server.url("/orders")).newBuilder().header("Idempotency-Key", "app-key-42").build();
    try (Response r = client(idem).newCall(request).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(List.of(Optional.of("app-key-42"), Optional.of("app-key-42")), keysSent(server));
    assertEquals(1, server.effectCount("app-key-42"));
  }

  @Test
  void enqueuedCallsRetryOnTheDispatcherThreadWithOneKey() throws Exception {
    server.plan().next(Fault.status(503)).next(Fault.commitThenDropResponse());
    OkHttpClient client = client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    CompletableFuture<String> body = new CompletableFuture<>();
    client.newCall(order(server.url("/orders"), op)).enqueue(new Callback() {
      @Override
      public void onFailure(Call call, IOException e) {
        body.completeExceptionally(e);
      }

      @Override
      public void onResponse(Call call, Response response) throws IOException {
        try (response) {
          body.complete(response.code() + " " + response.body().string());
        }
      }
    });
    assertEquals("201 " + createdBody(1, op.key()), body.get(10, TimeUnit.SECONDS));
    assertEquals(1, server.effectCount(op.key().value()));
    Fixture.assertKeyOnEveryRequest(server, op.key().value(), 3);
  }

  @Test
  void cancelingTheCallDuringBackoffLeavesTheOperationPendingWithoutAnotherSend() throws Exception {
    AtomicReference<Call> call = new AtomicReference<>();
    IdempotentExecutor executor = f.executorBuilder().sleeper(d -> call.get().cancel()).build();
    OkHttpClient client = client(IdemOkHttp.builder(executor).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(503));
    call.set(client.newCall(order(server.url("/orders"), op)));
    OperationPendingException e = assertThrows(OperationPendingException.class, () -> call.get().execute());
    assertEquals(op.id(), e.operationId());
    assertEquals(OperationState.PENDING, f.record(op).state());
    assertEquals(1, server.requestCount(), "nothing was sent after the cancel");
  }
}
