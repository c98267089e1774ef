package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Round2QueuedAttemptTimeoutRaceTest} for a keyed request with no body to refuse: a DELETE
 * (no RequestBody at all) and a POST whose body is empty. Its attempt timeout cancels the attempt
 * while it waits in OkHttp's ready queue, and the dispatcher promotes it in that very moment. The
 * rule: "not sent" (which can end the operation FAILED) only when the request certainly did not go
 * out; otherwise the attempt is AMBIGUOUS.
 *
 * <p>Deterministic as the Round2 test is: the executor's injected asyncExecutor, handed the
 * attempt's record from inside the timeout's cancel, frees the host's only slot and holds the
 * window open until the server has the keyed request (or the promoted call has ended without
 * sending it). Time is virtual.
 */
class QueuedBodylessCancelRaceTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final VirtualTime time = new VirtualTime();
  final InMemoryJournal journal = new InMemoryJournal();
  final ExecutorService pool = Executors.newSingleThreadExecutor();

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  /**
   * No body, so nothing makes the verdict atomic with the send: the cancel is an ordinary one, and
   * the attempt counts as possibly sent, whether or not the promoted call got out.
   */
  @Test
  void aBodylessDeleteTimedOutAsItIsPromotedIsAmbiguous() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentOperation op = IdempotentOperation.of("cancel-order");
    OperationRecord r = race(server, op, b -> b.url(server.url("/orders/1").toString()).method("DELETE", null));

    assertEquals(1, keyed(server, op), "the window held open let the promoted DELETE out: " + r);
    assertEquals(OperationState.UNCERTAIN, r.state(), "the server received the keyed DELETE: " + r);
    assertEquals(1, r.attempts().size(), r.toString());
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), r.toString());
  }

  /**
   * An empty body is still a body OkHttp writes (after the headers, before the flush), so the
   * cancel refuses it atomically, as for any body: the promotion sends nothing, and the attempt is
   * rightly recorded as not sent.
   */
  @Test
  void anEmptyBodiedPostTimedOutAsItIsPromotedSendsNothing() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentOperation op = IdempotentOperation.of("touch-order");
    assertRefusedAndNotSent(server, op, race(server, op,
        b -> b.url(server.url("/orders/1/touch").toString()).post(RequestBody.create(new byte[0]))));
  }

  /** OkHttp's {@code Request.Builder.delete()} sends an empty body: refused as the empty POST's is. */
  @Test
  void aDeleteWithOkHttpsEmptyBodyTimedOutAsItIsPromotedSendsNothing() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentOperation op = IdempotentOperation.of("cancel-order");
    assertRefusedAndNotSent(server, op, race(server, op, b -> b.url(server.url("/orders/1").toString()).delete()));
  }

  /**
   * A POST with {@code Expect: 100-continue}: OkHttp flushes its head, key included, before it
   * writes the body, so refusing the body would no longer keep the request off the wire. Its body
   * is never refused, and its cancel is the ordinary one, as a bodyless request's: however the race
   * goes, the attempt is ambiguous, never "not sent" (which would end the operation FAILED).
   */
  @Test
  void aPostWithExpectContinueTimedOutAsItIsPromotedIsAmbiguous() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentOperation op = IdempotentOperation.of("cancel-order");
    OperationRecord r = race(server, op, b -> b.url(server.url("/orders/1/cancel").toString())
        .header("Expect", "100-continue").post(RequestBody.create("{}".getBytes(StandardCharsets.UTF_8))));

    assertEquals(1, r.attempts().size(), r.toString());
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), r.toString());
    assertEquals(OperationState.UNCERTAIN, r.state(), r.toString());
  }

  private static void assertRefusedAndNotSent(IdempotentServer server, IdempotentOperation op, OperationRecord r) {
    assertEquals(0, keyed(server, op), "recorded as not sent, yet the promoted call went out: " + r);
    assertEquals(1, r.attempts().size(), r.toString());
    assertEquals("dev.idem.core.spi.RequestNotSentException", r.attempts().get(0).exceptionClass(), r.toString());
    for (AttemptRecord a : r.attempts()) {
      assertTrue(a.classification() != Classification.AMBIGUOUS, "nothing was sent: " + r);
    }
  }

  /**
   * The app's cancel of the call, for the bodyless DELETE, as the dispatcher promotes the queued
   * attempt: IdemCall cancels the execution first and the attempt's OkHttp call only after. The
   * window in between is held open by the app's own callback, which the cancel delivers inline (a
   * dispatcher executor that runs it on the cancelling thread): it frees the host's slot and waits
   * until the server has the keyed request. The operation stays PENDING, its attempt AMBIGUOUS.
   */
  @Test
  void aBodylessDeleteCancelledByTheAppAsItIsPromotedIsAmbiguous() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentOperation op = IdempotentOperation.of("cancel-order");
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).random(() -> 0.5).asyncExecutor(pool)
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofHours(1)).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    ExecutorService okhttpPool = Executors.newCachedThreadPool();
    Thread[] cancelling = new Thread[1];
    Dispatcher dispatcher = new Dispatcher(new java.util.concurrent.AbstractExecutorService() {
      @Override
      public void execute(Runnable command) {
        if (Thread.currentThread() == cancelling[0]) {
          command.run(); // the app's callback, inside the cancel
        } else {
          okhttpPool.execute(command);
        }
      }

      @Override
      public void shutdown() {
        okhttpPool.shutdown();
      }

      @Override
      public java.util.List<Runnable> shutdownNow() {
        return okhttpPool.shutdownNow();
      }

      @Override
      public boolean isShutdown() {
        return okhttpPool.isShutdown();
      }

      @Override
      public boolean isTerminated() {
        return okhttpPool.isTerminated();
      }

      @Override
      public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return okhttpPool.awaitTermination(timeout, unit);
      }
    });
    dispatcher.setMaxRequestsPerHost(1);
    CountDownLatch slotTaken = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch attemptEnded = new CountDownLatch(1);
    try {
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
              if (call.request().url().encodedPath().startsWith("/orders")) {
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
      Result slow = new Result();
      client.newCall(new Request.Builder().url(server.url("/slow").toString()).build()).enqueue(slow);
      assertTrue(slotTaken.await(10, TimeUnit.SECONDS));

      CompletableFuture<String> told = new CompletableFuture<>();
      Call call = idem.callFactory(client).newCall(new Request.Builder().url(server.url("/orders/1").toString())
          .method("DELETE", null).tag(IdempotentOperation.class, op).build());
      call.enqueue(new Callback() {
        @Override
        public void onFailure(Call c, IOException e) {
          // Between the execution's cancel and the attempt call's: the slot frees, the queued
          // attempt is promoted and goes out.
          release.countDown();
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
          while (keyed(server, op) == 0 && attemptEnded.getCount() > 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
          }
          told.complete(e.getClass().getName());
        }

        @Override
        public void onResponse(Call c, Response response) {
          response.close();
          told.complete("response " + response.code());
        }
      });
      cancelling[0] = Thread.currentThread();
      call.cancel();
      told.get(10, TimeUnit.SECONDS);
      slow.body.get(10, TimeUnit.SECONDS);
      assertTrue(attemptEnded.await(10, TimeUnit.SECONDS), "the promoted attempt's call ended");

      OperationRecord r = awaitAttempt(op);
      assertEquals(1, keyed(server, op), "the window held open let the promoted DELETE out: " + r);
      assertEquals(OperationState.PENDING, r.state(), "the app cancelled: PENDING with its key: " + r);
      assertEquals(1, r.attempts().size(), r.toString());
      assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), r.toString());
    } finally {
      okhttpPool.shutdownNow();
    }
  }

  /** The record once the cancelled attempt is in it (recorded on the executor's pool when it ends). */
  private OperationRecord awaitAttempt(IdempotentOperation op) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    OperationRecord r = journal.find(op.id()).orElseThrow();
    while (r.attempts().isEmpty() && System.nanoTime() < deadline) {
      Thread.onSpinWait();
      r = journal.find(op.id()).orElseThrow();
    }
    return r;
  }

  /** The attempt's record, after the race; asserts the rule that holds whoever wins it. */
  private OperationRecord race(IdempotentServer server, IdempotentOperation op,
      java.util.function.Consumer<Request.Builder> request) throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch attemptEnded = new CountDownLatch(1);
    // An attempt with Expect: 100-continue waits for the server's 100 before its body, and the
    // test server records a request only once it has the body (it sends no 100 of its own): the
    // window closes once the attempt's head is out instead.
    CountDownLatch expectHeadOut = new CountDownLatch(1);
    AtomicInteger armed = new AtomicInteger(-1);
    Executor hooked = command -> {
      if (armed.get() >= 0 && armed.getAndIncrement() == 1) {
        // Handed the attempt's record from inside the timeout's cancel: the host's slot frees now
        // and the queued attempt is promoted while the cancel is still under way.
        release.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (keyed(server, op) == 0 && attemptEnded.getCount() > 0 && expectHeadOut.getCount() > 0
            && System.nanoTime() < deadline) {
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

          @Override
          public void requestHeadersEnd(Call call, Request request) {
            if (request.url().encodedPath().startsWith("/orders") && request.header("Expect") != null) {
              expectHeadOut.countDown();
            }
          }

          private void ended(Call call) {
            if (call.request().url().encodedPath().startsWith("/orders")) {
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

    Result slow = new Result();
    client.newCall(new Request.Builder().url(server.url("/slow").toString()).build()).enqueue(slow);
    assertTrue(slotTaken.await(10, TimeUnit.SECONDS));

    Request.Builder b = new Request.Builder().tag(IdempotentOperation.class, op);
    request.accept(b);
    Result a = new Result();
    idem.callFactory(client).newCall(b.build()).enqueue(a);

    armed.set(0);
    time.advance(Duration.ofSeconds(2)); // the attempt timeout, while the attempt waits in the queue
    try {
      a.body.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException ignored) {
      // the app's callback: whatever it is told
    }
    slow.body.get(10, TimeUnit.SECONDS);
    assertTrue(attemptEnded.await(10, TimeUnit.SECONDS), "the promoted attempt's call ended");

    OperationRecord r = journal.find(op.id()).orElseThrow();
    if (keyed(server, op) > 0) {
      assertTrue(r.state() != OperationState.FAILED, "the server received the keyed request, yet the journal"
          + " ended the operation FAILED as never sent: " + r);
      assertTrue(r.attempts().stream().anyMatch(x -> x.classification() == Classification.AMBIGUOUS),
          "the server received the keyed request, yet no attempt counts as possibly sent: " + r);
    }
    return r;
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
