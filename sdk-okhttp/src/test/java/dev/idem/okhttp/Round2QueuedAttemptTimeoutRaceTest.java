package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
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
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.EventListener;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A cancel that lands as the attempt is being sent. CallFutures' cancel override (the attempt
 * timeout firing while the attempt waits in OkHttp's ready queue) checks {@code !written()}, completes
 * the attempt as not sent, and only then cancels the OkHttp call. Everything that depends on the
 * attempt's future runs in between, on the timing-out thread, before {@code call.cancel()}: when
 * the dispatcher promotes the queued call in that window, the whole request goes out, the server
 * applies it, and the journal records the attempt as never sent. With maxAttempts(1) the operation
 * then ends FAILED (terminal: "no effect, give up") although the server applied it.
 *
 * <p>Deterministic: the window is held open by the executor's injected asyncExecutor, which the
 * attempt's completion hands its record to from inside the cancel; it waits until the server has the
 * keyed request. Time is virtual; the slot-holding call is released on a latch.
 *
 * <p>Fixed by making the not-sent verdict atomic with the body write (FollowUps.AttemptBody refuses
 * the body, and CallFutures cancels the OkHttp call before completing the attempt): the window the
 * hook holds open now sends nothing, so the test asserts that, and a second test covers the other
 * side, a cancel that lands while the body is being written (an ordinary, ambiguous cancel).
 */
class Round2QueuedAttemptTimeoutRaceTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final VirtualTime time = new VirtualTime();
  final InMemoryJournal journal = new InMemoryJournal();
  final ExecutorService pool = Executors.newSingleThreadExecutor();

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  @Test
  void anAttemptThatWentOutAsItsTimeoutCancelledItIsNotRecordedAsNotSent() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch attemptEnded = new CountDownLatch(1);
    AtomicInteger armed = new AtomicInteger(-1);
    Executor hooked = command -> {
      if (armed.get() >= 0 && armed.getAndIncrement() == 1) {
        // Handed the attempt's record from inside the timeout's cancel, before call.cancel(): the
        // host's slot frees now (the other download ends) and the queued attempt goes out.
        release.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (keyed(server, op) == 0 && attemptEnded.getCount() > 0 && System.nanoTime() < deadline) {
          Thread.onSpinWait();
        }
      }
      pool.execute(command);
    };
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).random(() -> 0.5).asyncExecutor(hooked)
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).attemptTimeout(Duration.ofSeconds(2))
            .deadline(Duration.ofHours(1)).build())
        .build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequestsPerHost(1);
    CountDownLatch slotTaken = new CountDownLatch(1);
    OkHttpClient client = idem.install(new OkHttpClient.Builder().dispatcher(dispatcher))
        .eventListener(new EventListener() {
          @Override
          public void callFailed(Call call, IOException ioe) {
            ended(call);
          }

          @Override
          public void callEnd(Call call) {
            ended(call);
          }

          private void ended(Call call) {
            if (call.request().url().encodedPath().equals("/orders")) {
              attemptEnded.countDown();
            }
          }
        })
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

    Result slow = new Result();
    client.newCall(new Request.Builder().url(server.url("/slow").toString()).build()).enqueue(slow);
    assertTrue(slotTaken.await(10, TimeUnit.SECONDS));

    Request order = new Request.Builder().url(server.url("/orders").toString())
        .post(RequestBody.create("{\"qty\":1}", MediaType.get("application/json")))
        .tag(IdempotentOperation.class, op).build();
    Result a = new Result();
    calls.newCall(order).enqueue(a);

    armed.set(0);
    time.advance(Duration.ofSeconds(2)); // the attempt timeout, while the attempt waits in the queue
    try {
      a.body.get(10, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException ignored) {
      // the app's callback: whatever it is told
    }
    slow.body.get(10, TimeUnit.SECONDS);

    OperationRecord r = journal.find(op.id()).orElseThrow();
    if (keyed(server, op) > 0) {
      assertNotEquals(OperationState.FAILED, r.state(),
          "the server received (and applied) the keyed request, yet the journal ended the operation FAILED as"
              + " never sent: " + r);
    }
    // The cancel refused the body before anything depending on the attempt ran (and cancelled the
    // call first): the dispatcher's promotion of the queued call, held open above, sends nothing.
    assertEquals(0, keyed(server, op), "the attempt recorded as not sent went out after its cancel: " + r);
  }

  /**
   * The other side of the race: the body is being written when the attempt timeout cancels the
   * attempt. The request may be out, so the cancel is an ordinary one (ambiguous attempt), never a
   * not-sent one that would end the operation FAILED.
   */
  @Test
  void anAttemptCancelledWhileItsBodyIsWrittenCountsAsPossiblySent() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).random(() -> 0.5).asyncExecutor(pool)
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).attemptTimeout(Duration.ofSeconds(2))
            .deadline(Duration.ofHours(1)).build())
        .build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    CountDownLatch bodyWritten = new CountDownLatch(1);
    CountDownLatch cancelled = new CountDownLatch(1);
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).eventListener(new EventListener() {
      @Override
      public void requestBodyEnd(Call call, long byteCount) {
        // The body is written (not yet flushed) when the attempt timeout fires.
        bodyWritten.countDown();
        try {
          cancelled.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }

      @Override
      public void canceled(Call call) {
        // The timeout's cancel runs on the executor's pool, after advance() returns: the body is
        // released only once it has cancelled the call, or the response could win the race.
        cancelled.countDown();
      }
    }).build();
    Call.Factory calls = idem.callFactory(client);
    Request order = new Request.Builder().url(server.url("/orders").toString())
        .post(RequestBody.create("{\"qty\":1}", MediaType.get("application/json")))
        .tag(IdempotentOperation.class, op).build();
    Result a = new Result();
    calls.newCall(order).enqueue(a);
    assertTrue(bodyWritten.await(10, TimeUnit.SECONDS));

    time.advance(Duration.ofSeconds(2)); // the attempt timeout, while the body is being written
    assertTrue(cancelled.await(10, TimeUnit.SECONDS), "the attempt timeout never cancelled the call");
    try {
      a.body.get(10, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException ignored) {
      // the app's callback: whatever it is told
    }

    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertNotEquals(OperationState.FAILED, r.state(), "an attempt cancelled while its body was written may have"
        + " taken effect, yet the operation ended FAILED: " + r);
    assertEquals(1, r.attempts().size(), r.toString());
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), r.toString());
  }

  private static long keyed(IdempotentServer server, IdempotentOperation op) {
    return server.recordedRequests().stream().filter(r -> r.keyHeader().equals(Optional.of(op.key().value()))).count();
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
