package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The app shuts its OkHttp client down the way OkHttp documents
 * ({@code client.dispatcher().executorService().shutdown()}) while an enqueued
 * {@link IdemOkHttp#callFactory} call waits out a backoff after a 503 (nothing took effect). Every
 * later attempt is refused by the dead dispatcher before a byte is written, at once, so the
 * remaining attempts burn through in the backoffs alone and the operation ends FAILED: terminal,
 * although the target was never reached again and could still take it. The app's later execution
 * of the same operation (on a new client, after a restart) then gets the FAILED answer from the
 * journal and never sends. The java.net.http adapter ends the same situation PENDING
 * (LiveTransport#stopped: "an attempt the transport refuses since the shutdown is recorded as the
 * stopped call's, never as one not sent to retry").
 */
class AsyncReviewDispatcherShutDownDuringBackoffTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  @Test
  void shuttingTheClientDownDuringABackoffLeavesTheOperationPendingNotFailed() throws Exception {
    IdempotentServer server = serverExtension.server();
    CountDownLatch retryScheduled = new CountDownLatch(1);
    IdemOkHttp idem = IdemOkHttp.builder(
        f.executorBuilder().scheduler(CallFactoryTest.scheduledOn(f, retryScheduled)).build()).build();
    OkHttpClient client = Fixture.client(idem);
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(503));

    Call call = idem.callFactory(client).newCall(order(server.url("/orders"), op));
    CallFactoryTest.Result result = new CallFactoryTest.Result();
    call.enqueue(result);
    assertTrue(retryScheduled.await(10, TimeUnit.SECONDS), "the 503 was answered and a retry scheduled");

    client.dispatcher().executorService().shutdown(); // the app shuts its client down
    // Every backoff passes, one virtual second at a time (the default policy's are shorter).
    for (int i = 0; i < 120 && !result.body.isDone(); i++) {
      f.time.advance(Duration.ofSeconds(1));
      try {
        result.body.get(200, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.TimeoutException stillWaiting) {
        // the next attempt is being refused and its backoff scheduled
      } catch (Exception ended) {
        break; // the callback heard of the failure
      }
    }
    assertTrue(result.body.isDone(), "the call ended");

    OperationRecord r = f.record(op);
    assertEquals(1, server.recordedRequests().size(), "only the first attempt reached the target");
    assertEquals(OperationState.PENDING, r.state(),
        "the client's shutdown turned an operation that can still be delivered into a terminal state; attempts: "
            + r.attempts());
  }
}
