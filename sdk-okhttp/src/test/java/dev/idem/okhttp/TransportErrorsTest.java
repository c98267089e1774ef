package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.assertKeyOnEveryRequest;
import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 15: what a RuntimeException inside OkHttp means depends on where it was thrown, and a
 * Retry-After that OkHttp itself cannot parse must not strand the operation.
 */
class TransportErrorsTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  IdempotentServer server() {
    return serverExtension.server();
  }

  private static OkHttpClient client(IdemOkHttp idem, Interceptor below) {
    return new OkHttpClient.Builder().addInterceptor(idem.interceptor()).addInterceptor(below)
        .retryOnConnectionFailure(false).build();
  }

  // Before: OkHttp's RetryAndFollowUpInterceptor threw NumberFormatException on the 503, and the
  // operation was left PENDING as "interrupted or cancelled". Now the attempt is ambiguous (the 503
  // arrived, so the request went out) and retried with the same key after a capped wait.
  @ParameterizedTest
  @ValueSource(strings = {"99999999999999999999", "2147483648", "-5", "soon", "", "1e9"})
  void aRetryAfterOkHttpCannotParseIsRetriedWithTheSameKey(String retryAfter) throws Exception {
    server().plan().next(Fault.status(503).withHeader("Retry-After", retryAfter));
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = Fixture.client(f.idem()).newCall(order(server().url("/orders"), op)).execute()) {
      assertEquals(201, r.code());
    }
    assertKeyOnEveryRequest(server(), op.key().value(), 2);
    assertEquals(1, server().effectCount(op.key().value()));
    assertEquals(OperationState.SUCCEEDED, f.record(op).state());
    // Never longer than maxDelay (10 s by default), whatever the server asked for.
    assertTrue(f.record(op).attempts().get(0).delay().compareTo(Duration.ofSeconds(10)) <= 0);
  }

  @Test
  void anInterceptorThatThrowsBeforeWritingIsASafeAttemptAndNothingReachesTheServer() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Interceptor flaky = chain -> {
      if (calls.incrementAndGet() == 1) {
        throw new IllegalStateException("token cache not ready");
      }
      return chain.proceed(chain.request());
    };
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = client(f.idem(), flaky).newCall(order(server().url("/orders"), op)).execute()) {
      assertEquals(201, r.code());
    }
    assertKeyOnEveryRequest(server(), op.key().value(), 1);
    AttemptRecord first = f.record(op).attempts().get(0);
    assertEquals(Classification.SAFE, first.classification());
  }

  @Test
  void anInterceptorThatAlwaysThrowsBeforeWritingEndsFailedNotUncertain() throws Exception {
    Interceptor broken = chain -> {
      throw new IllegalStateException("misconfigured");
    };
    IdempotentOperation op = IdempotentOperation.of("create-order");
    IOException e = assertThrows(IOException.class,
        () -> client(f.idem(), broken).newCall(order(server().url("/orders"), op)).execute().close());
    assertEquals(OperationState.FAILED, f.record(op).state(), String.valueOf(e));
    assertEquals(0, server().requestCount());
  }

  @Test
  void anInterceptorThatThrowsAfterTheResponseIsAnAmbiguousAttempt() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Interceptor afterwards = chain -> {
      Response r = chain.proceed(chain.request());
      if (calls.incrementAndGet() == 1) {
        r.close();
        throw new IllegalStateException("response handler bug");
      }
      return r;
    };
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = client(f.idem(), afterwards).newCall(order(server().url("/orders"), op)).execute()) {
      assertEquals(201, r.code());
    }
    assertKeyOnEveryRequest(server(), op.key().value(), 2);
    assertEquals(1, server().effectCount(op.key().value()));
    AttemptRecord first = f.record(op).attempts().get(0);
    assertEquals(Classification.AMBIGUOUS, first.classification());
    assertEquals(IllegalStateException.class.getName(), first.exceptionClass());
  }
}
