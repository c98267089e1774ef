package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.client;
import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Attempts that were never sent: a cancel (or the call timeout) during the backoff is noticed when
 * the next attempt starts, and a connect refused writes nothing. Neither may count as an ambiguous
 * attempt, and a FAILED call whose later attempts were not sent still hands over a readable
 * response. Before: the cancel was journaled AMBIGUOUS, so a later permanent 404 ended the
 * operation UNCERTAIN; the FAILED call's response body had been closed before the next attempt.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class AttemptsNotSentTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  /**
   * A call canceled during the backoff sends nothing more, yet the journal records a phantom
   * AMBIGUOUS attempt for the request that never went out; a later permanent 404 then ends the
   * operation UNCERTAIN instead of FAILED.
   */
  @Test
  void cancelDuringBackoffRecordsNoPhantomAmbiguousAttempt() throws Exception {
    AtomicReference<Call> call = new AtomicReference<>();
    IdempotentExecutor executor = f.executorBuilder().sleeper(d -> call.get().cancel()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient client = client(idem);
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(503));
    call.set(client.newCall(order(server.url("/orders"), op)));
    assertThrows(OperationPendingException.class, () -> call.get().execute());
    assertEquals(1, server.requestCount(), "only the 503 went out");

    // The one request the server got was a 503; nothing else was sent.
    for (AttemptRecord a : f.record(op).attempts()) {
      assertTrue(a.classification() != Classification.AMBIGUOUS,
          "attempt " + a.number() + " recorded AMBIGUOUS although nothing was sent: " + f.record(op).attempts());
    }
  }
  /** The consequence: the operation, resumed, gets a permanent 404 and should end FAILED. */
  @Test
  void cancelDuringBackoffThenPermanentRefusalEndsFailedNotUncertain() throws Exception {
    AtomicReference<Call> call = new AtomicReference<>();
    IdempotentExecutor executor = f.executorBuilder().sleeper(d -> call.get().cancel()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient client = client(idem);
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(503)).next(Fault.status(404));
    call.set(client.newCall(order(server.url("/orders"), op)));
    assertThrows(OperationPendingException.class, () -> call.get().execute());

    // The app runs the same operation again (same tag): the server refuses it for good.
    try (Response r = client.newCall(order(server.url("/orders"), op)).execute()) {
      assertEquals(404, r.code());
    } catch (IOException e) {
      // before the fix: OperationUncertainException; the journal's state below says which
    }
    assertEquals(2, server.requestCount(), "a 503 and a 404: neither took effect");
    assertEquals(OperationState.FAILED, f.record(op).state(), "attempts: " + f.record(op).attempts());
  }


  /**
   * Attempt 1 is answered 503; attempt 2 is refused at connect (provably not sent); attempts run
   * out, FAILED with the 503 as its last response, which the call returns. Its body must be readable.
   */
  @Test
  void failedWithAnEarlierAttemptsResponseHandsOverAReadableBody() throws Exception {
    IdempotentExecutor executor = f.executorBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(2).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    AtomicInteger passes = new AtomicInteger();
    OkHttpClient client = idem.install(new OkHttpClient.Builder())
        .addInterceptor(chain -> {
          // Below Idem: on the second attempt the connect is refused before anything is written.
          if (passes.incrementAndGet() == 2) {
            throw new ConnectException("Connection refused");
          }
          return chain.proceed(chain.request());
        })
        .retryOnConnectionFailure(false).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(503));
    try (Response r = client.newCall(order(server.url("/orders"), op)).execute()) {
      assertEquals(503, r.code());
      assertEquals(OperationState.FAILED, IdempotencyResult.of(r).orElseThrow().state());
      String body = assertDoesNotThrowBody(r);
      assertTrue(body != null);
    }
    assertEquals(OperationState.FAILED, f.record(op).state());
  }
  private static String assertDoesNotThrowBody(Response r) {
    try {
      return r.body().string();
    } catch (Exception e) {
      throw new AssertionError("the response handed to the caller has an unreadable body: " + e, e);
    }
  }
}
