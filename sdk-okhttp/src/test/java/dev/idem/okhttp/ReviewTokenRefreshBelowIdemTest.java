package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Review: the README sends credentials to "an interceptor added after install", since the
 * Authenticator is not consulted for keyed requests. The usual such interceptor refreshes an
 * expired token on a 401 and proceeds again. The follow-up guard refuses that second proceed (so
 * far so good: one request per attempt), but the attempt, which the server answered with a 401
 * (certainly not acted on), is recorded as AMBIGUOUS. A later permanent answer (402 card declined)
 * then ends the operation UNCERTAIN and throws, instead of FAILED with the 402 response: a payment
 * that certainly did not happen is reported as one that may have.
 */
class ReviewTokenRefreshBelowIdemTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  @Test
  void aDeclineAfterATokenRefreshIsFailedNotUncertain() throws Exception {
    AtomicReference<String> token = new AtomicReference<>("expired");
    Interceptor auth = chain -> {
      Response r = chain.proceed(chain.request().newBuilder().header("Authorization", "Bearer " + token.get()).build());
      if (r.code() != 401) {
        return r;
      }
      r.close();
      token.set("fresh"); // refreshed
      return chain.proceed(chain.request().newBuilder().header("Authorization", "Bearer " + token.get()).build());
    };
    IdemOkHttp idem = f.idem();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).addInterceptor(auth).build();
    IdempotentOperation op = IdempotentOperation.of("create-payment");
    server.plan().next(Fault.status(401).withHeader("WWW-Authenticate", "Bearer"));
    server.plan().next(Fault.status(402));

    int code;
    try (Response r = client.newCall(Fixture.order(server.url("/payments"), op)).execute()) {
      code = r.code();
    }
    OperationRecord rec = f.record(op);
    assertEquals(402, code, "the decline, as OkHttp would return it");
    assertEquals(OperationState.FAILED, rec.state(), rec.attempts().toString());
    assertEquals(0, server.effectCount(op.key().value()));
  }
}
