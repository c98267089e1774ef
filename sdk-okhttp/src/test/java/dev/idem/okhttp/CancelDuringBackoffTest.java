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
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * OkHttp's Call.cancel() (or its call timeout) during the backoff is noticed when the next attempt
 * starts, before anything is sent. It used to be recorded as an AMBIGUOUS attempt, "interrupted
 * while waiting for the response", so a later permanent 404 ended the operation UNCERTAIN.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class CancelDuringBackoffTest {
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
      // falls through to the state check
      System.out.println("second call threw " + e);
    }
    assertEquals(2, server.requestCount(), "a 503 and a 404: neither took effect");
    assertEquals(OperationState.FAILED, f.record(op).state(), "attempts: " + f.record(op).attempts());
  }}
