package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import okhttp3.Call;
import okhttp3.Callback;
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
 * <p>Deterministic as the Round2 test is ({@link QueuedAttemptRace}): the executor's injected
 * asyncExecutor, handed the attempt's record from inside the timeout's cancel, frees the host's
 * only slot and holds the window open until the server has the keyed request (or the promoted call
 * has ended without sending it). Time is virtual.
 */
class QueuedBodylessCancelRaceTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  private QueuedAttemptRace race;

  @AfterEach
  void stop() {
    if (race != null) {
      race.close();
    }
  }

  /**
   * No body, so nothing makes the verdict atomic with the send: the cancel is an ordinary one, and
   * the attempt counts as possibly sent, whether or not the promoted call got out.
   */
  @Test
  void aBodylessDeleteTimedOutAsItIsPromotedIsAmbiguous() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentOperation op = IdempotentOperation.of("cancel-order");
    OperationRecord r = race(op, b -> b.url(server.url("/orders/1").toString()).method("DELETE", null));

    assertEquals(1, race.keyed(op), "the window held open let the promoted DELETE out: " + r);
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
    assertRefusedAndNotSent(op, race(op,
        b -> b.url(server.url("/orders/1/touch").toString()).post(RequestBody.create(new byte[0]))));
  }

  /** OkHttp's {@code Request.Builder.delete()} sends an empty body: refused as the empty POST's is. */
  @Test
  void aDeleteWithOkHttpsEmptyBodyTimedOutAsItIsPromotedSendsNothing() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentOperation op = IdempotentOperation.of("cancel-order");
    assertRefusedAndNotSent(op, race(op, b -> b.url(server.url("/orders/1").toString()).delete()));
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
    OperationRecord r = race(op, b -> b.url(server.url("/orders/1/cancel").toString())
        .header("Expect", "100-continue").post(RequestBody.create("{}".getBytes(StandardCharsets.UTF_8))));

    assertEquals(1, r.attempts().size(), r.toString());
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), r.toString());
    assertEquals(OperationState.UNCERTAIN, r.state(), r.toString());
  }

  private void assertRefusedAndNotSent(IdempotentOperation op, OperationRecord r) {
    assertEquals(0, race.keyed(op), "recorded as not sent, yet the promoted call went out: " + r);
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
    ExecutorService okhttpPool = Executors.newCachedThreadPool();
    Thread[] cancelling = new Thread[1];
    race = new QueuedAttemptRace(server, new java.util.concurrent.AbstractExecutorService() {
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
    IdemOkHttp idem = IdemOkHttp.builder(race.executor(
        RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofHours(1)).build())).build();
    try {
      OkHttpClient client = race.client(idem);
      race.holdSlot(client);

      CompletableFuture<String> told = new CompletableFuture<>();
      Call call = idem.callFactory(client).newCall(new Request.Builder().url(server.url("/orders/1").toString())
          .method("DELETE", null).tag(IdempotentOperation.class, op).build());
      call.enqueue(new Callback() {
        @Override
        public void onFailure(Call c, IOException e) {
          // Between the execution's cancel and the attempt call's: the slot frees, the queued
          // attempt is promoted and goes out.
          race.holdWindowOpen(op);
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
      race.freeSlot();
      race.assertAttemptCallEnded();

      OperationRecord r = race.recordOnceAttempted(op);
      assertEquals(1, race.keyed(op), "the window held open let the promoted DELETE out: " + r);
      assertEquals(OperationState.PENDING, r.state(), "the app cancelled: PENDING with its key: " + r);
      assertEquals(1, r.attempts().size(), r.toString());
      assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), r.toString());
    } finally {
      okhttpPool.shutdownNow();
    }
  }

  /** The attempt's record, after the timeout race for {@code op}'s request as {@code request} builds it. */
  private OperationRecord race(IdempotentOperation op, Consumer<Request.Builder> request) throws Exception {
    race = new QueuedAttemptRace(serverExtension.server());
    Request.Builder b = new Request.Builder().tag(IdempotentOperation.class, op);
    request.accept(b);
    return race.timeOutAsItIsPromoted(b.build());
  }
}
