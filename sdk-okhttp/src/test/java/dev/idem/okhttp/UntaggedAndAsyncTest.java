package dev.idem.okhttp;

import dev.idem.core.UntaggedPolicy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.testkit.VirtualTime;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The untagged-request policy, asynchronous calls, and cancellation. */
class UntaggedAndAsyncTest {
  static final MediaType JSON = MediaType.get("application/json");

  final VirtualTime time = new VirtualTime();
  final InMemoryJournal journal = new InMemoryJournal();
  KeyedServer server;

  @BeforeEach
  void setUp() throws IOException {
    server = new KeyedServer();
  }

  @AfterEach
  void tearDown() {
    server.close();
  }

  IdempotentExecutor.Builder executorBuilder() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).random(() -> 0.5);
  }

  static OkHttpClient client(IdemOkHttp idem) {
    return new OkHttpClient.Builder().addInterceptor(idem.interceptor()).retryOnConnectionFailure(false).build();
  }

  Request untaggedPost() {
    return new Request.Builder().url(server.url("/orders")).post(RequestBody.create("{\"qty\":1}", JSON)).build();
  }

  List<OperationRecord> allRecords() throws IOException {
    List<OperationRecord> all = new ArrayList<>();
    for (OperationState s : OperationState.values()) {
      all.addAll(journal.findByState(s, null, 100));
    }
    return all;
  }

  @Test
  void untaggedPostPassesThroughByDefault() throws Exception {
    server.then(KeyedServer.Fault.UNAVAILABLE_503);
    OkHttpClient client = client(IdemOkHttp.builder(executorBuilder().build()).build());
    try (Response r = client.newCall(untaggedPost()).execute()) {
      assertEquals(503, r.code(), "not retried: nothing says this server honours keys");
      assertTrue(IdempotencyResult.of(r).isEmpty());
    }
    assertEquals(1, server.requests().size());
    assertNull(server.keysSent().get(0));
    assertTrue(allRecords().isEmpty(), "nothing journaled");
  }

  @Test
  void untaggedPostGetsAFreshKeyWhenConfigured() throws Exception {
    server.then(KeyedServer.Fault.UNAVAILABLE_503);
    IdemOkHttp idem = IdemOkHttp.builder(executorBuilder().build()).untaggedPolicy(UntaggedPolicy.FRESH_KEY).build();
    OkHttpClient client = client(idem);
    try (Response r = client.newCall(untaggedPost()).execute()) {
      assertEquals(201, r.code());
    }
    List<String> keys = server.keysSent();
    assertEquals(2, keys.size());
    assertEquals(keys.get(0), keys.get(1));
    assertEquals(1, server.effects(keys.get(0)));
    OperationRecord rec = allRecords().get(0);
    assertEquals("untagged POST", rec.id().operation());
    assertEquals(keys.get(0), rec.id().key().value());

    // A second call is another operation with another key; a GET is never touched.
    try (Response r = client.newCall(untaggedPost()).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(2, server.totalEffects());
    try (Response r = client.newCall(new Request.Builder().url(server.url("/orders/1")).build()).execute()) {
      assertEquals(200, r.code());
    }
    assertNull(server.keysSent().get(3), "untagged GET passes through");
    assertEquals(2, allRecords().size());
  }

  @Test
  void untaggedPostWithTheAppsOwnKeyHeaderKeepsThatKey() throws Exception {
    IdemOkHttp idem = IdemOkHttp.builder(executorBuilder().build()).untaggedPolicy(UntaggedPolicy.FRESH_KEY).build();
    server.then(KeyedServer.Fault.COMMIT_THEN_DROP);
    Request request = untaggedPost().newBuilder().header("Idempotency-Key", "app-key-42").build();
    try (Response r = client(idem).newCall(request).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(List.of("app-key-42", "app-key-42"), server.keysSent());
    assertEquals(1, server.effects("app-key-42"));
  }

  @Test
  void enqueuedCallsRetryOnTheDispatcherThreadWithOneKey() throws Exception {
    server.then(KeyedServer.Fault.UNAVAILABLE_503, KeyedServer.Fault.COMMIT_THEN_DROP);
    OkHttpClient client = client(IdemOkHttp.builder(executorBuilder().build()).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request request = new Request.Builder().url(server.url("/orders")).post(RequestBody.create("{\"qty\":1}", JSON))
        .tag(IdempotentOperation.class, op).build();
    CompletableFuture<String> body = new CompletableFuture<>();
    client.newCall(request).enqueue(new Callback() {
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
    assertEquals("201 {\"order\":1}", body.get(10, TimeUnit.SECONDS));
    assertEquals(1, server.effects(op.key().value()));
    assertEquals(List.of(op.key().value(), op.key().value(), op.key().value()), server.keysSent());
  }

  @Test
  void cancelingTheCallDuringBackoffLeavesTheOperationPendingWithoutAnotherSend() throws Exception {
    AtomicReference<Call> call = new AtomicReference<>();
    IdempotentExecutor executor = executorBuilder().sleeper(d -> call.get().cancel()).build();
    OkHttpClient client = client(IdemOkHttp.builder(executor).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.then(KeyedServer.Fault.UNAVAILABLE_503);
    call.set(client.newCall(new Request.Builder().url(server.url("/orders"))
        .post(RequestBody.create("{\"qty\":1}", JSON)).tag(IdempotentOperation.class, op).build()));
    OperationPendingException e = assertThrows(OperationPendingException.class, () -> call.get().execute());
    assertEquals(op.id(), e.operationId());
    assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state());
    assertEquals(1, server.requests().size(), "nothing was sent after the cancel");
  }
}
