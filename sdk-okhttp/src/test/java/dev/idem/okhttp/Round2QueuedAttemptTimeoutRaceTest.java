package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.EventListener;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
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
 * <p>Deterministic ({@link QueuedAttemptRace}): the window is held open by the executor's injected
 * asyncExecutor, which the attempt's completion hands its record to from inside the cancel; it
 * waits until the server has the keyed request. Time is virtual; the slot-holding call is released
 * on a latch.
 *
 * <p>Fixed by making the not-sent verdict atomic with the body write (FollowUps.AttemptBody refuses
 * the body, and CallFutures cancels the OkHttp call before completing the attempt): the window the
 * hook holds open now sends nothing, so the test asserts that, and a second test covers the other
 * side, a cancel that lands while the body is being written (an ordinary, ambiguous cancel).
 */
class Round2QueuedAttemptTimeoutRaceTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  QueuedAttemptRace race;

  @BeforeEach
  void start() {
    race = new QueuedAttemptRace(serverExtension.server());
  }

  @AfterEach
  void stop() {
    race.close();
  }

  @Test
  void anAttemptThatWentOutAsItsTimeoutCancelledItIsNotRecordedAsNotSent() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request order = new Request.Builder().url(server.url("/orders").toString())
        .post(RequestBody.create("{\"qty\":1}", MediaType.get("application/json")))
        .tag(IdempotentOperation.class, op).build();

    OperationRecord r = race.timeOutAsItIsPromoted(order);

    // The cancel refused the body before anything depending on the attempt ran (and cancelled the
    // call first): the dispatcher's promotion of the queued call, held open by the race, sends nothing.
    assertEquals(0, race.keyed(op), "the attempt recorded as not sent went out after its cancel: " + r);
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
    IdemOkHttp idem = IdemOkHttp.builder(race.executor(QueuedAttemptRace.ONE_TIMED_ATTEMPT)).build();
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
    QueuedAttemptRace.Result a = new QueuedAttemptRace.Result();
    calls.newCall(order).enqueue(a);
    assertTrue(bodyWritten.await(10, TimeUnit.SECONDS));

    race.time.advance(QueuedAttemptRace.ATTEMPT_TIMEOUT); // the attempt timeout, while the body is being written
    assertTrue(cancelled.await(10, TimeUnit.SECONDS), "the attempt timeout never cancelled the call");
    a.awaitSettled();

    OperationRecord r = race.journal.find(op.id()).orElseThrow();
    assertNotEquals(OperationState.FAILED, r.state(), "an attempt cancelled while its body was written may have"
        + " taken effect, yet the operation ended FAILED: " + r);
    assertEquals(1, r.attempts().size(), r.toString());
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), r.toString());
  }
}
