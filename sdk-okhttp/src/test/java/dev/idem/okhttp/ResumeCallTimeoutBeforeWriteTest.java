package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import okhttp3.Call;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A resumed attempt whose OkHttp call timeout (the journaled request's own timeout, which
 * ClientTransport sets as the call's) elapses before anything of it is written: an interceptor
 * below Idem's (a token refresh, a slow connect) holds it. OkHttp fails the call with a plain
 * InterruptedIOException("timeout"). The asynchronous path refuses the body and reports a request
 * not sent: the operation stops PENDING with no attempt recorded. The synchronous path skipped that
 * for a canceled call (a timed-out call is a canceled one) and recorded an attempt that may have
 * taken effect: a later permanent refusal then ended UNCERTAIN instead of FAILED. The two now agree.
 *
 * <p>The call timeout runs on OkHttp's watchdog, in real time; the test waits for its cancel (an
 * event), never sleeps.
 */
class ResumeCallTimeoutBeforeWriteTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;
  IdemOkHttp idem;
  IdempotentExecutor executor;
  OkHttpClient client;
  final AtomicBoolean holdOnce = new AtomicBoolean(true);

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
    idem = f.idem();
    executor = idem.executor();
    CountDownLatch canceled = new CountDownLatch(1);
    client = new OkHttpClient.Builder().addInterceptor(idem.interceptor())
        .addInterceptor(chain -> {
          if (holdOnce.getAndSet(false)) {
            try {
              // Held below Idem's interceptor, before anything is written, until the call timeout
              // cancels the call; proceeding then fails as OkHttp fails a timed-out call.
              assertTrue(canceled.await(10, TimeUnit.SECONDS), "the call timeout never fired");
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return chain.proceed(chain.request());
        })
        .eventListener(new EventListener() {
          @Override
          public void canceled(Call call) {
            canceled.countDown();
          }
        })
        .retryOnConnectionFailure(false).build();
  }

  private OperationId journalOrder() throws Exception {
    RequestSnapshot snapshot = RequestSnapshot.builder("POST", server.url("/orders"))
        .body("{\"qty\":1}".getBytes(StandardCharsets.UTF_8), "application/json")
        .timeout(Duration.ofSeconds(1)).build();
    return executor.enqueue(Operation.builder("create-order", snapshot).build()).id();
  }

  @Test
  void syncResumeTimedOutBeforeWriteRecordsNoAttempt() throws Exception {
    OperationId id = journalOrder();
    assertThrows(IdempotencyException.class, () -> executor.resume(id, idem.transport(client)));
    assertNothingSentNoAttempt(id);

    server.plan().next(Fault.status(403));
    try {
      executor.resume(id, idem.transport(client));
    } catch (OperationFailedException expected) {
      // the permanent refusal
    }
    assertRefusedForGood(id);
  }

  @Test
  void asyncResumeTimedOutBeforeWriteRecordsNoAttempt() throws Exception {
    OperationId id = journalOrder();
    assertThrows(ExecutionException.class,
        () -> executor.resumeAsync(id, idem.asyncTransport(client)).get(10, TimeUnit.SECONDS));
    assertNothingSentNoAttempt(id);
  }

  private void assertNothingSentNoAttempt(OperationId id) throws IOException {
    OperationRecord r = f.journal.find(id).orElseThrow();
    assertEquals(0, server.requestCount(), "nothing was sent");
    assertEquals(OperationState.PENDING, r.state(), r.toString());
    assertEquals(0, r.attempts().size(), "no request went out, yet the journal records an attempt: " + r);
  }

  private void assertRefusedForGood(OperationId id) throws IOException {
    OperationRecord r = f.journal.find(id).orElseThrow();
    assertEquals(1, server.requestCount(), "the one request ever sent with this key");
    assertEquals(1, server.recordedRequests().stream()
        .filter(q -> q.keyHeader().equals(java.util.Optional.of(id.key().value()))).count(), r.toString());
    assertEquals(OperationState.FAILED, r.state(), r.toString());
  }
}
