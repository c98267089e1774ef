package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
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
  void anAttemptStillQueuedInTheDispatcherIsNotAnAmbiguousAttempt() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentExecutor executor = race.executorBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).attemptTimeout(Duration.ofSeconds(2))
            .deadline(Duration.ofHours(1)).build())
        .build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient client = race.client(idem);
    Call.Factory calls = idem.callFactory(client);

    // Another call of the app holds the host's only slot (a slow download, say).
    race.holdSlot(client);

    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request order = new Request.Builder().url(server.url("/orders").toString())
        .post(RequestBody.create("{\"qty\":1}", MediaType.get("application/json")))
        .tag(IdempotentOperation.class, op).build();
    QueuedAttemptRace.Result a = new QueuedAttemptRace.Result();
    calls.newCall(order).enqueue(a);

    // Time passes while the operation's attempts wait in the dispatcher's queue.
    for (int i = 0; i < 200 && !a.body.isDone(); i++) {
      race.time.advance(Duration.ofSeconds(1));
      try {
        a.body.get(50, TimeUnit.MILLISECONDS);
      } catch (TimeoutException | ExecutionException ignored) {
        // not yet
      }
    }
    race.freeSlot();

    assertEquals(0, race.keyed(op), "no attempt of the operation ever reached the server");
    OperationState state = race.journal.find(op.id()).orElseThrow().state();
    assertNotEquals(OperationState.UNCERTAIN, state,
        "nothing was sent, yet the operation is UNCERTAIN (effect may exist) and never delivered");
  }
}
