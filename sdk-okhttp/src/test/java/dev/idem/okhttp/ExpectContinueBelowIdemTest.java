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
import java.util.function.UnaryOperator;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.junit.jupiter.api.Test;

/**
 * {@link ExpectContinueHeadersOutNotSentTest} for the other ways an attempt comes to carry
 * {@code Expect: 100-continue}: the header spelled in another case by the app, and the header added
 * by an interceptor below Idem's, after the attempt's body was made. Either way OkHttp flushes the
 * keyed head and waits for the answer before the body, so a failure then is ambiguous (UNCERTAIN
 * with maxAttempts(1)), never "not sent" (FAILED). The server reads the head and drops the
 * connection without answering; no timing is involved.
 */
class ExpectContinueBelowIdemTest {
  final Fixture f = new Fixture();

  @Test
  void expectHeaderInAnotherCaseIsAmbiguous() throws Exception {
    IdempotentExecutor executor = f.executorBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    assertHeadOutIsAmbiguous(Fixture.client(idem), r -> r.newBuilder().header("expect", "100-Continue").build());
  }

  @Test
  void expectHeaderAddedBelowIdemIsAmbiguous() throws Exception {
    IdempotentExecutor executor = f.executorBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder().retryOnConnectionFailure(false))
        .addInterceptor(chain -> chain.proceed(chain.request().newBuilder().header("Expect", "100-continue").build()))
        .build();
    assertHeadOutIsAmbiguous(client, UnaryOperator.identity());
  }

  /** Only the body rule is set aside: a refused connection, which sent nothing at all, is still not sent. */
  @Test
  void refusedConnectionWithExpectIsStillNotSent() throws Exception {
    int port;
    try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = ss.getLocalPort(); // closed again: connecting to it is refused
    }
    IdempotentExecutor executor = f.executorBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    IdempotentOperation op = IdempotentOperation.of("cancel-order");
    Request request = new Request.Builder().url("http://127.0.0.1:" + port + "/orders/42/cancel")
        .header("Expect", "100-continue")
        .post(RequestBody.create(Fixture.ORDER, Fixture.JSON))
        .tag(IdempotentOperation.class, op).build();
    assertThrows(IOException.class, () -> Fixture.client(idem).newCall(request).execute().close());

    OperationRecord r = f.record(op);
    assertEquals(OperationState.FAILED, r.state(), "nothing reached the network: " + r);
    assertEquals(Classification.SAFE, r.attempts().get(0).classification(), r.toString());
  }

  private void assertHeadOutIsAmbiguous(OkHttpClient client, UnaryOperator<Request> expect) throws Exception {
    try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<String> head = CompletableFuture.supplyAsync(() -> {
        try (Socket s = ss.accept()) {
          return ExpectContinueHeadersOutNotSentTest.readHead(s.getInputStream()); // then the connection drops
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      IdempotentOperation op = IdempotentOperation.of("cancel-order");
      Request request = expect.apply(new Request.Builder()
          .url("http://127.0.0.1:" + ss.getLocalPort() + "/orders/42/cancel")
          .post(RequestBody.create(Fixture.ORDER, Fixture.JSON))
          .tag(IdempotentOperation.class, op).build());
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
