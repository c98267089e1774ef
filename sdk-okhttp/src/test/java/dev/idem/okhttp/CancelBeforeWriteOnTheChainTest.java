package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The synchronous twin of {@link AsyncReviewCancelBeforeFirstSendTest}: a live call cancelled while
 * an interceptor below Idem's holds its attempt (a token refresh, say), which then fails as OkHttp
 * does for a cancelled call, before anything of the request is written. ChainTransport turned that
 * into a plain InterruptedIOException, which the executor records as an attempt that may have
 * taken effect: a later permanent refusal then ended UNCERTAIN instead of FAILED.
 */
class CancelBeforeWriteOnTheChainTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  @Test
  void aCancelWhileAnInterceptorBelowHoldsTheAttemptRecordsNoAttempt() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().build()).build();
    AtomicBoolean cancelOnce = new AtomicBoolean(true);
    OkHttpClient client = new OkHttpClient.Builder().addInterceptor(idem.interceptor())
        .addInterceptor(chain -> {
          if (cancelOnce.getAndSet(false)) {
            chain.call().cancel(); // the app's cancel lands while this interceptor refreshes a token
            throw new IOException("Canceled");
          }
          return chain.proceed(chain.request());
        })
        .retryOnConnectionFailure(false).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");

    assertThrows(IOException.class, () -> client.newCall(order(server.url("/orders"), op)).execute().close());
    assertEquals(0, server.recordedRequests().size(), "nothing was sent");
    assertEquals(OperationState.PENDING, f.record(op).state());
    assertEquals(0, f.record(op).attempts().size(),
        "no request went out, yet the journal records an attempt: " + f.record(op).attempts());

    // Executed again later; the server refuses it for good.
    server.plan().next(Fault.status(403));
    try (okhttp3.Response r = client.newCall(order(server.url("/orders"), op)).execute()) {
      // whatever the adapter hands back
    } catch (IOException expected) {
      // a FAILED operation may be reported as an exception
    }
    assertEquals(1, server.recordedRequests().size(), "the one request ever sent with this key");
    assertEquals(OperationState.FAILED, f.record(op).state(), "attempts: " + f.record(op).attempts());
  }
}
