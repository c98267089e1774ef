package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.testing.VirtualTime;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * callFactory enqueue under dispatcher limits: an attempt that waits in OkHttp's ready queue (the
 * host's slots taken by other calls) is timed out by attemptTimeout and recorded as an ambiguous
 * attempt, though it never left the client. The operation ended UNCERTAIN with nothing sent.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class DispatcherQueuedAttemptTimeoutTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final VirtualTime time = new VirtualTime();
  final InMemoryJournal journal = new InMemoryJournal();

  @Test
  void anAttemptStillQueuedInTheDispatcherIsNotAnAmbiguousAttempt() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).random(() -> 0.5)
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).attemptTimeout(Duration.ofSeconds(2))
            .deadline(Duration.ofHours(1)).build())
        .build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequestsPerHost(1);
    CountDownLatch slotTaken = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    OkHttpClient client = idem.install(new OkHttpClient.Builder().dispatcher(dispatcher))
        .addInterceptor(chain -> {
          if (chain.request().url().encodedPath().equals("/slow")) {
            slotTaken.countDown();
            try {
              release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return chain.proceed(chain.request());
        }).build();
    Call.Factory calls = idem.callFactory(client);

    // Another call of the app holds the host's only slot (a slow download, say).
    Result slow = new Result();
    client.newCall(new Request.Builder().url(server.url("/slow").toString()).build()).enqueue(slow);
    assertTrue(slotTaken.await(10, TimeUnit.SECONDS));

    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request order = new Request.Builder().url(server.url("/orders").toString())
        .post(RequestBody.create("{\"qty\":1}", MediaType.get("application/json")))
        .tag(IdempotentOperation.class, op).build();
    Result a = new Result();
    calls.newCall(order).enqueue(a);

    // Time passes while the operation's attempts wait in the dispatcher's queue.
    for (int i = 0; i < 200 && !a.body.isDone(); i++) {
      time.advance(Duration.ofSeconds(1));
      try {
        a.body.get(50, TimeUnit.MILLISECONDS);
      } catch (TimeoutException | java.util.concurrent.ExecutionException ignored) {
        // not yet
      }
    }
    release.countDown();
    slow.body.get(10, TimeUnit.SECONDS);

    assertEquals(0, server.recordedRequests().stream()
        .filter(r -> r.keyHeader().equals(Optional.of(op.key().value()))).count(),
        "no attempt of the operation ever reached the server");
    OperationState state = journal.find(op.id()).orElseThrow().state();
    assertNotEquals(OperationState.UNCERTAIN, state,
        "nothing was sent, yet the operation is UNCERTAIN (effect may exist) and never delivered");
  }

  static final class Result implements Callback {
    final CompletableFuture<String> body = new CompletableFuture<>();

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
  }
}
