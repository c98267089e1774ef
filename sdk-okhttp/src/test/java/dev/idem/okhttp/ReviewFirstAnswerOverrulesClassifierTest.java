package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Classification;
import dev.idem.core.Classifier;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.Verdict;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Review (round2c): FollowUps.answeredWithoutEffect judges a refused follow-up's first answer with
 * Classifier.defaults(), not with the executor's classifier. An app behind Envoy/Istio (whose 503
 * "upstream reset before headers" comes after the request reached the backend) configures
 * {@code forStatus(503, ambiguous)}; with a retry-on-503 interceptor below Idem, a committed
 * request answered 503 becomes a SAFE "not acted on" attempt, and the next attempt's 402 ends the
 * operation FAILED although the server acted (effectCount 1) and the app's own classifier said so.
 * Without the interceptor below, the same exchange ends UNCERTAIN (second test, passes).
 */
class ReviewFirstAnswerOverrulesClassifierTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  private IdemOkHttp idem() {
    Classifier mesh = Classifier.forStatus(503, Verdict.ambiguous("the mesh's 503 follows an upstream reset"))
        .orElse(Classifier.defaults());
    return IdemOkHttp.builder(f.executorBuilder().classifier(mesh).build()).build();
  }

  /** Retries once, below Idem, on a 503. */
  private static Interceptor retryOn503() {
    return chain -> {
      Response r = chain.proceed(chain.request());
      if (r.code() != 503) {
        return r;
      }
      r.close();
      return chain.proceed(chain.request());
    };
  }

  @Test
  void aCommitted503TheAppCallsAmbiguousDoesNotEndFailed() throws Exception {
    OkHttpClient client = idem().install(new OkHttpClient.Builder()).addInterceptor(retryOn503()).build();
    IdempotentOperation op = IdempotentOperation.of("create-payment");
    server.plan().next(Fault.commitThenStatus(503));
    server.plan().next(Fault.status(402));

    int code = -1;
    try (Response r = client.newCall(Fixture.order(server.url("/payments"), op)).execute()) {
      code = r.code();
    } catch (OperationUncertainException expected) {
      // what the app's classifier calls for
    }
    Fixture.assertKeyOnEveryRequest(server, op.key().value(), 2);
    assertEquals(1, server.effectCount(op.key().value()), "the server acted on the first request");
    OperationRecord rec = f.record(op);
    assertEquals(OperationState.UNCERTAIN, rec.state(),
        "returned HTTP " + code + "; attempts " + rec.attempts());
    assertEquals(Classification.AMBIGUOUS, rec.attempts().get(0).classification(), rec.attempts().toString());
  }

  @Test
  void withoutTheInterceptorBelowTheSameExchangeEndsUncertain() throws Exception {
    OkHttpClient client = idem().install(new OkHttpClient.Builder()).build();
    IdempotentOperation op = IdempotentOperation.of("create-payment");
    server.plan().next(Fault.commitThenStatus(503));
    server.plan().next(Fault.status(402));

    assertThrows(OperationUncertainException.class,
        () -> client.newCall(Fixture.order(server.url("/payments"), op)).execute().close());
    assertEquals(OperationState.UNCERTAIN, f.record(op).state());
  }
}
