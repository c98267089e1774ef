package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationException;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import dev.idem.testkit.ReceivedRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * After a restart, journaled operations are sent through the app's own client: its interceptors
 * re-apply Authorization, the key is the journaled one, and the idempotency interceptor in that
 * client does not start a second operation.
 */
class ResumeTransportTest {
  static final Interceptor AUTH = chain -> chain.proceed(
      chain.request().newBuilder().header("Authorization", "Bearer fresh-token").build());

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture(); // its in-memory journal stands in for a durable one
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  static OkHttpClient appClient(IdemOkHttp idem) {
    return new OkHttpClient.Builder().addInterceptor(idem.interceptor()).addInterceptor(AUTH)
        .retryOnConnectionFailure(false).build();
  }

  /** Runs one call that is cut off (as by a crash) during its backoff, leaving it PENDING. */
  IdempotentOperation leavePending() throws IOException {
    IdempotentExecutor dying = f.executorBuilder().sleeper(d -> {
      throw new InterruptedException("process is going down");
    }).build();
    IdempotentOperation op = IdempotentOperation.of("create-order").withReference("cart-7");
    server.plan().next(Fault.commitThenDropResponse());
    Request request = Fixture.order(server.url("/orders"), op);
    assertThrows(OperationPendingException.class, () -> appClient(IdemOkHttp.builder(dying).build())
        .newCall(request).execute());
    Thread.interrupted(); // the executor re-asserted the interrupt for us; this test thread goes on
    assertEquals(OperationState.PENDING, f.record(op).state());
    assertTrue(f.record(op).request().header("Authorization").isEmpty());
    return op;
  }

  @Test
  void resumePendingSendsTheJournaledKeyThroughTheAppsInterceptors() throws Exception {
    IdempotentOperation op = leavePending();
    f.time.advance(Duration.ofSeconds(1));

    IdemOkHttp idem = f.idem(); // the restarted process
    OkHttpClient client = appClient(idem);
    List<Outcome> outcomes = new ArrayList<>();
    List<OperationException> failures = new ArrayList<>();
    ResumeSummary summary = idem.executor().resumePending(
        Map.of("create-order", ResumeHandler.of(idem.transport(client), outcomes::add, failures::add)));

    assertEquals(1, summary.succeeded(), summary.toString());
    assertTrue(failures.isEmpty());
    assertTrue(outcomes.get(0).replayed(), "the first attempt had committed; the resume got the replay");
    assertEquals(Fixture.createdBody(1, op.key()), new String(outcomes.get(0).response().body(), StandardCharsets.UTF_8));
    assertEquals(1, server.effectCount(op.key().value()));
    Fixture.assertKeyOnEveryRequest(server, op.key().value(), 2);
    ReceivedRequest resumed = server.recordedRequests().get(1);
    assertEquals(Optional.of("Bearer fresh-token"), resumed.header("Authorization"));
    assertEquals(Optional.of("application/json; charset=utf-8"), resumed.header("Content-Type"));
    assertEquals("{\"qty\":1}", resumed.body());
    assertEquals(OperationState.SUCCEEDED, f.record(op).state());
    assertEquals(1, f.journal.findByState(OperationState.SUCCEEDED, null, 10).size(),
        "the resumed attempt did not become an operation of its own");
  }

  @Test
  void asyncTransportResumesWithEnqueue() throws Exception {
    IdempotentOperation op = leavePending();
    IdemOkHttp idem = f.idem();
    var record = f.record(op);
    Outcome outcome = idem.executor().executeAsync(
        op.toOperation(record.request()), idem.asyncTransport(appClient(idem))).get(10, TimeUnit.SECONDS);
    assertTrue(outcome.replayed());
    assertEquals(1, server.effectCount(op.key().value()));
    assertEquals(Optional.of("Bearer fresh-token"), server.recordedRequests().get(1).header("Authorization"));
    assertEquals(OperationState.SUCCEEDED, f.record(op).state());
  }

  // The README quickstart's answer to "who delivers what a call left PENDING": one dispatcher.
  @Test
  void anOutboxDispatcherWithTheAppsTransportDeliversWhatACallLeftPending() throws Exception {
    IdempotentOperation op = leavePending();
    IdemOkHttp idem = f.idem();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem.executor()).clock(f.time.clock())
        .scheduler(f.time.scheduler()).register("create-order", idem.transport(appClient(idem))).build().start();
    try {
      CompletableFuture<Outcome> delivered = outbox.await(op.id());
      f.time.advance(Duration.ofSeconds(1));

      Outcome outcome = delivered.get(10, TimeUnit.SECONDS);
      assertEquals(op.key(), outcome.key());
      assertTrue(outcome.replayed(), "the cut-off attempt had committed; the dispatcher got the replay");
      assertEquals(1, server.effectCount(op.key().value()));
      Fixture.assertKeyOnEveryRequest(server, op.key().value(), 2);
      assertEquals(Optional.of("Bearer fresh-token"), server.recordedRequests().get(1).header("Authorization"));
      assertEquals(OperationState.SUCCEEDED, f.record(op).state());
    } finally {
      outbox.close();
    }
  }
}
