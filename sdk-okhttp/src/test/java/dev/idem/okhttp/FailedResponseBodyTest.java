package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.ConnectException;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A FAILED call whose last response came from an earlier attempt (later attempts were not sent)
 * hands that response over: its body was closed before the next attempt, and the caller got
 * IllegalStateException("closed") reading it.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class FailedResponseBodyTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
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
