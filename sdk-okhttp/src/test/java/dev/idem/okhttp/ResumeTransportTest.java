package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationException;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.ResumeHandler;
import dev.idem.core.ResumeSummary;
import dev.idem.testkit.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import mockwebserver3.RecordedRequest;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * After a restart, journaled operations are sent through the app's own client: its interceptors
 * re-apply Authorization, the key is the journaled one, and the idempotency interceptor in that
 * client does not start a second operation.
 */
class ResumeTransportTest {
  static final MediaType JSON = MediaType.get("application/json");
  static final Interceptor AUTH = chain -> chain.proceed(
      chain.request().newBuilder().header("Authorization", "Bearer fresh-token").build());

  final VirtualTime time = new VirtualTime();
  final InMemoryJournal journal = new InMemoryJournal(); // stands in for a durable journal
  KeyedServer server;

  @BeforeEach
  void setUp() throws IOException {
    server = new KeyedServer();
  }

  @AfterEach
  void tearDown() {
    server.close();
  }

  IdempotentExecutor.Builder executorBuilder() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).random(() -> 0.5);
  }

  static OkHttpClient appClient(IdemOkHttp idem) {
    return new OkHttpClient.Builder().addInterceptor(idem.interceptor()).addInterceptor(AUTH)
        .retryOnConnectionFailure(false).build();
  }

  /** Runs one call that is cut off (as by a crash) during its backoff, leaving it PENDING. */
  IdempotentOperation leavePending() throws IOException {
    IdempotentExecutor dying = executorBuilder().sleeper(d -> {
      throw new InterruptedException("process is going down");
    }).build();
    IdempotentOperation op = IdempotentOperation.of("create-order").withReference("cart-7");
    server.then(KeyedServer.Fault.COMMIT_THEN_DROP);
    Request request = new Request.Builder().url(server.url("/orders")).post(RequestBody.create("{\"qty\":1}", JSON))
        .tag(IdempotentOperation.class, op).build();
    assertThrows(OperationPendingException.class, () -> appClient(IdemOkHttp.builder(dying).build())
        .newCall(request).execute());
    Thread.interrupted(); // the executor re-asserted the interrupt for us; this test thread goes on
    assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state());
    assertTrue(journal.find(op.id()).orElseThrow().request().header("Authorization").isEmpty());
    return op;
  }

  @Test
  void resumePendingSendsTheJournaledKeyThroughTheAppsInterceptors() throws Exception {
    IdempotentOperation op = leavePending();
    time.advance(Duration.ofSeconds(1));

    IdemOkHttp idem = IdemOkHttp.builder(executorBuilder().build()).build(); // the restarted process
    OkHttpClient client = appClient(idem);
    List<Outcome> outcomes = new ArrayList<>();
    List<OperationException> failures = new ArrayList<>();
    ResumeSummary summary = idem.executor().resumePending(
        Map.of("create-order", ResumeHandler.of(idem.transport(client), outcomes::add, failures::add)));

    assertEquals(1, summary.succeeded(), summary.toString());
    assertTrue(failures.isEmpty());
    assertTrue(outcomes.get(0).replayed(), "the first attempt had committed; the resume got the replay");
    assertEquals("{\"order\":1}", new String(outcomes.get(0).response().body(), java.nio.charset.StandardCharsets.UTF_8));
    assertEquals(1, server.effects(op.key().value()));
    assertEquals(List.of(op.key().value(), op.key().value()), server.keysSent());
    RecordedRequest resumed = server.requests().get(1);
    assertEquals("Bearer fresh-token", resumed.getHeaders().get("Authorization"));
    assertEquals("application/json; charset=utf-8", resumed.getHeaders().get("Content-Type"));
    assertEquals("{\"qty\":1}", resumed.getBody().utf8());
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    assertEquals(1, journal.findByState(OperationState.SUCCEEDED, null, 10).size(),
        "the resumed attempt did not become an operation of its own");
  }

  @Test
  void asyncTransportResumesWithEnqueue() throws Exception {
    IdempotentOperation op = leavePending();
    IdemOkHttp idem = IdemOkHttp.builder(executorBuilder().build()).build();
    var record = journal.find(op.id()).orElseThrow();
    Outcome outcome = idem.executor().executeAsync(
        op.toOperation(record.request()), idem.asyncTransport(appClient(idem))).get(10, TimeUnit.SECONDS);
    assertTrue(outcome.replayed());
    assertEquals(1, server.effects(op.key().value()));
    assertEquals("Bearer fresh-token", server.requests().get(1).getHeaders().get("Authorization"));
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
  }
}
