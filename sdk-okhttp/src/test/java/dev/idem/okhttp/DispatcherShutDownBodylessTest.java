package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link AsyncReviewDispatcherShutDownDuringBackoffTest} for a bodyless request (a keyed DELETE):
 * with no body to tell "written" by, OkHttp's refusal by the shut-down dispatcher was an attempt
 * that may have been sent, so each refused retry counted as AMBIGUOUS and the operation ended
 * UNCERTAIN although only its first attempt ever reached the target. LiveCallTransport now checks
 * the dispatcher itself before it enqueues: nothing is sent, the call stops, the operation stays
 * PENDING with its key.
 */
class DispatcherShutDownBodylessTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  @Test
  void aBodylessCallStopsPendingWhenTheDispatcherIsShutDownDuringABackoff() throws Exception {
    IdempotentServer server = serverExtension.server();
    CountDownLatch retryScheduled = new CountDownLatch(1);
    IdemOkHttp idem = IdemOkHttp.builder(
        f.executorBuilder().scheduler(CallFactoryTest.scheduledOn(f, retryScheduled)).build()).build();
    OkHttpClient client = Fixture.client(idem);
    IdempotentOperation op = IdempotentOperation.of("cancel-order");
    server.plan().next(Fault.status(503));

    Request delete = new Request.Builder().url(server.url("/orders/1").toString()).method("DELETE", null)
        .tag(IdempotentOperation.class, op).build();
    Call call = idem.callFactory(client).newCall(delete);
    CallFactoryTest.Result result = new CallFactoryTest.Result();
    call.enqueue(result);
    assertTrue(retryScheduled.await(10, TimeUnit.SECONDS), "the 503 was answered and a retry scheduled");

    client.dispatcher().executorService().shutdown();
    for (int i = 0; i < 120 && !result.body.isDone(); i++) {
      f.time.advance(Duration.ofSeconds(1));
      try {
        result.body.get(200, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.TimeoutException stillWaiting) {
        // the next attempt is being refused and its backoff scheduled
      } catch (Exception ended) {
        break;
      }
    }
    assertTrue(result.body.isDone(), "the call ended");

    OperationRecord r = f.record(op);
    assertEquals(1, server.recordedRequests().size(), "only the first attempt reached the target");
    assertEquals(OperationState.PENDING, r.state(), "attempts: " + r.attempts());
    for (AttemptRecord a : r.attempts()) {
      assertTrue(a.classification() != Classification.AMBIGUOUS, "a refused attempt recorded as possibly sent: "
          + r.attempts());
    }
  }
}
