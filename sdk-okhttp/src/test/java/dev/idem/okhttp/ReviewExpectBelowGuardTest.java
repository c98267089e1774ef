package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.junit.jupiter.api.Test;

/**
 * Review (rv-expect): docs/client.md says the body rule is set aside for an attempt carrying
 * {@code Expect: 100-continue} "even one an interceptor below Idem's added". FollowUpGuard only
 * sees the request as it is handed to it; it is the FIRST network interceptor, so an app network
 * interceptor (added with addNetworkInterceptor, which runs after the guard) that adds the header
 * is never seen: the AttemptBody stays NOT_STARTED, OkHttp flushes the keyed head and waits for
 * 100 Continue, the connection drops, and FollowUps.notSent refuses the body and records the
 * attempt not sent: FAILED with maxAttempts(1) although the server had the keyed head. Likewise
 * a client that uses the documented {@link IdemOkHttp#interceptor()} alone (no guard) with an
 * interceptor below Idem's adding the header. The server reads the head and closes; no timing.
 */
class ReviewExpectBelowGuardTest {
  final Fixture f = new Fixture();

  @Test
  void expectHeaderAddedByAppNetworkInterceptorIsAmbiguous() throws Exception {
    IdempotentExecutor executor = f.executorBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder().retryOnConnectionFailure(false))
        .addNetworkInterceptor(chain -> chain.proceed(
            chain.request().newBuilder().header("Expect", "100-continue").build()))
        .build();
    assertHeadOutIsAmbiguous(client);
  }

  @Test
  void expectHeaderAddedBelowInterceptorOnlyClientIsAmbiguous() throws Exception {
    IdempotentExecutor executor = f.executorBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient client = new OkHttpClient.Builder().retryOnConnectionFailure(false)
        .addInterceptor(idem.interceptor())
        .addInterceptor(chain -> chain.proceed(
            chain.request().newBuilder().header("Expect", "100-continue").build()))
        .build();
    assertHeadOutIsAmbiguous(client);
  }

  private void assertHeadOutIsAmbiguous(OkHttpClient client) throws Exception {
    try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<String> head = CompletableFuture.supplyAsync(() -> {
        try (Socket s = ss.accept()) {
          return ExpectContinueHeadersOutNotSentTest.readHead(s.getInputStream()); // then the connection drops
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      IdempotentOperation op = IdempotentOperation.of("cancel-order");
      Request request = new Request.Builder()
          .url("http://127.0.0.1:" + ss.getLocalPort() + "/orders/42/cancel")
          .post(RequestBody.create(Fixture.ORDER, Fixture.JSON))
          .tag(IdempotentOperation.class, op).build();
      assertThrows(IOException.class, () -> client.newCall(request).execute().close());

      String received = head.get(10, TimeUnit.SECONDS).toLowerCase(Locale.ROOT);
      assertTrue(received.contains("expect: 100-continue") && received.contains(op.key().value().toLowerCase(Locale.ROOT)),
          "the server got the keyed head, sent for Expect: 100-continue: " + received);
      OperationRecord r = f.record(op);
      assertEquals(OperationState.UNCERTAIN, r.state(), "the server had the keyed head and may have acted on it: " + r);
      assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), r.toString());
    }
  }
}
