package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Classification;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A refresh-on-401 interceptor below Idem: its second proceed is refused (one request per
 * attempt), and what the first request was answered decides the attempt. A 401 proves no effect:
 * the attempt is not acted on, and the next one (a journaled attempt of its own, same key, after
 * backoff) goes out through the interceptor with the new token. A 500 may follow an effect: the
 * attempt stays ambiguous.
 */
class TokenRefreshBelowIdemAttemptsTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;
  final AtomicReference<String> token = new AtomicReference<>("expired");

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  /** Refreshes the token and proceeds again on a 401, or on any status in {@code refreshOn}. */
  private Interceptor refreshingOn(int refreshOn) {
    return chain -> {
      Response r = chain.proceed(chain.request().newBuilder().header("Authorization", "Bearer " + token.get()).build());
      if (r.code() != refreshOn) {
        return r;
      }
      r.close();
      token.set("fresh");
      return chain.proceed(chain.request().newBuilder().header("Authorization", "Bearer " + token.get()).build());
    };
  }

  @Test
  void theNextAttemptGoesOutWithTheSameKeyAndTheFreshToken() throws Exception {
    IdemOkHttp idem = f.idem();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).addInterceptor(refreshingOn(401)).build();
    IdempotentOperation op = IdempotentOperation.of("create-payment");
    server.plan().next(Fault.status(401).withHeader("WWW-Authenticate", "Bearer"));

    try (Response r = client.newCall(Fixture.order(server.url("/payments"), op)).execute()) {
      assertEquals(201, r.code());
    }
    Fixture.assertKeyOnEveryRequest(server, op.key().value(), 2);
    assertEquals(List.of(Optional.of("Bearer expired"), Optional.of("Bearer fresh")),
        server.recordedRequests().stream().map(q -> q.header("Authorization")).toList());
    assertEquals(1, server.effectCount(op.key().value()));
    OperationRecord rec = f.record(op);
    assertEquals(OperationState.SUCCEEDED, rec.state());
    assertEquals(List.of(Classification.SAFE, Classification.SUCCESS),
        rec.attempts().stream().map(a -> a.classification()).toList(), rec.attempts().toString());
    assertEquals(List.of(java.time.Duration.ofMillis(100)), f.time.sleeps(), "the policy's backoff, on virtual time");
  }

  @Test
  void aRefusedFollowUpAfterAnAnswerThatMayFollowAnEffectStaysAmbiguous() throws Exception {
    IdemOkHttp idem = f.idem();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).addInterceptor(refreshingOn(500)).build();
    IdempotentOperation op = IdempotentOperation.of("create-payment");
    server.plan().next(Fault.commitThenStatus(500));
    server.plan().next(Fault.status(402));

    assertThrows(OperationUncertainException.class,
        () -> client.newCall(Fixture.order(server.url("/payments"), op)).execute().close());
    Fixture.assertKeyOnEveryRequest(server, op.key().value(), 2);
    OperationRecord rec = f.record(op);
    assertEquals(OperationState.UNCERTAIN, rec.state());
    assertEquals(Classification.AMBIGUOUS, rec.attempts().get(0).classification(), rec.attempts().toString());
  }
}
