package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.okhttp.internal.FollowUpGuard;
import dev.idem.testkit.IdempotentServerExtension;
import java.util.List;
import java.util.Optional;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 14, "Why": the first call needed five types and two nested builders, and OkHttp's silent
 * connection retry ran underneath Idem. {@link IdemOkHttp#create} and {@link IdemOkHttp#install}
 * fix both; since issue 24 the silent retry is off for keyed attempts even without install.
 */
class OneLineSetupTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();
  private final Fixture f = new Fixture();

  private IdempotentServer server() {
    return serverExtension.server();
  }

  @Test
  void firstCallNeedsAJournalAndOneLineOfSetup() throws Exception {
    InMemoryJournal journal = new InMemoryJournal();
    IdemOkHttp idem = IdemOkHttp.create(journal);
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();

    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = client.newCall(Fixture.order(server().url("/orders"), op)).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(1, server().effectCount(op.key().value()));
    assertEquals(Optional.of(op.key().value()), server().recordedRequests().get(0).keyHeader());
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    assertSame(journal, idem.executor().journal(), "the executor was built inside, over the app's journal");
    assertEquals(List.of(FollowUpGuard.INSTANCE), client.networkInterceptors(), "install added the follow-up guard");
    // Issue 24: install no longer changes the client's settings; keyed attempts go out once anyway.
    assertTrue(client.retryOnConnectionFailure(), "untagged calls keep OkHttp's behaviour");
  }

  @Test
  void installIsIdempotentAndRefusesNothingElse() {
    IdemOkHttp idem = f.idem();
    OkHttpClient.Builder b = new OkHttpClient.Builder();
    idem.install(idem.install(b));
    assertEquals(1, b.interceptors().stream().filter(i -> i == idem.interceptor()).count());
    assertEquals(List.of(FollowUpGuard.INSTANCE), b.networkInterceptors());
    assertThrows(NullPointerException.class, () -> IdemOkHttp.create(null));
  }

  /**
   * The reproduction of issue 14: the interceptor added by hand, OkHttp's retryOnConnectionFailure
   * left on. OkHttp repeated the request below Idem: the server got 3 requests for 1 journaled
   * attempt, and the operation ended SUCCEEDED where the policy (2 attempts, both responses lost)
   * calls for UNCERTAIN. Since issue 24 the interceptor itself turns that retry off for keyed
   * attempts, whatever the client says: every request at the server is a journaled attempt.
   */
  @Test
  void evenWithTheInterceptorAloneAndOkHttpsSilentRetryOnEveryRequestIsAJournaledAttempt() throws Exception {
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().retryPolicy(twoAttempts()).build()).build();
    OkHttpClient client = new OkHttpClient.Builder().addInterceptor(idem.interceptor()).build();
    assertTrue(client.retryOnConnectionFailure());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    warmUp(client);
    server().plan().forNext(2, Fault.commitThenDropResponse());
    Request request = Fixture.order(server().url("/orders"), op);
    assertThrows(OperationUncertainException.class, () -> client.newCall(request).execute());
    OperationRecord rec = f.record(op);
    assertEquals(OperationState.UNCERTAIN, rec.state());
    assertEquals(2, rec.attempts().size());
    assertEquals(2, requestsWith(op), "requests at the server == attempts in the journal");
    assertEquals(1, server().effectCount(op.key().value()));
  }

  /** After {@link IdemOkHttp#install}: every request at the server is a journaled attempt. */
  @Test
  void afterInstallEveryRequestIsAJournaledAttemptAndTheEndingIsUncertain() throws Exception {
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().retryPolicy(twoAttempts()).build()).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    warmUp(client);
    server().plan().forNext(2, Fault.commitThenDropResponse());
    Request request = Fixture.order(server().url("/orders"), op);
    assertThrows(OperationUncertainException.class, () -> client.newCall(request).execute());
    OperationRecord rec = f.record(op);
    assertEquals(OperationState.UNCERTAIN, rec.state());
    assertEquals(2, rec.attempts().size());
    assertEquals(2, requestsWith(op), "requests at the server == attempts in the journal");
    assertEquals(3, server().requestCount(), "the warm-up GET and the two attempts, nothing else");
    assertEquals(1, server().effectCount(op.key().value()));
  }

  /**
   * Leaves a kept-alive connection in the client's pool. OkHttp repeats a request silently when a
   * pooled connection breaks under it, which is where its retry hides.
   */
  private void warmUp(OkHttpClient client) throws Exception {
    try (Response r = client.newCall(new Request.Builder().url(server().url("/warm-up").toString()).build())
        .execute()) {
      assertTrue(r.isSuccessful(), "warm-up " + r.code());
      r.body().string();
    }
  }

  private long requestsWith(IdempotentOperation op) {
    return server().recordedRequests().stream()
        .filter(r -> r.keyHeader().equals(Optional.of(op.key().value()))).count();
  }

  private static RetryPolicy twoAttempts() {
    return RetryPolicy.builder().maxAttempts(2).build();
  }
}
