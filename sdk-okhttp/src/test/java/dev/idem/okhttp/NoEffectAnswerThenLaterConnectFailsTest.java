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
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/**
 * A keyed POST answered with a status that proves no effect (a 503, a 401), then a failure of a
 * later connection (an interceptor below Idem that retries on 503, a token refresh whose auth
 * server is down). A review of e5af0790 asked for such an attempt to stay SAFE, as the guard's
 * refusal of a second request on the same connection makes it ({@code FollowUps.answeredWithoutEffect},
 * the contrast case below); the next review showed why it is not: the answer proves the first
 * request had no effect, not that nothing else went out, and an interceptor that fails over
 * through a client of its own can have had a standby read the request before the failure came
 * ({@link NoEffectAnswerThenFailoverStandbyReadItTest}). A failure after the head proves nothing,
 * so the attempt is AMBIGUOUS and the operation UNCERTAIN: on the safe side, and it can be sent
 * again with its key. The contrast stays: a refused second request is Idem's own guard speaking.
 */
class NoEffectAnswerThenLaterConnectFailsTest {
  final Fixture f = new Fixture();

  /** A 503 with Connection: close, the server goes down, the interceptor's retry is refused. */
  @Test
  void a503AnsweredKeyedPostRetriedBelowIdemIntoARefusedConnectIsUncertain() throws Exception {
    OperationRecord r = answerThenRetryBelowIdem(true);
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(),
        "a failure after the head proves nothing of what else went out: " + r);
    assertEquals(OperationState.UNCERTAIN, r.state(), r.toString());
  }

  /**
   * Contrast (passes): the same 503 on a kept-alive connection; the retry reuses it, the guard
   * refuses it, and the attempt is judged by its 503: SAFE, FAILED.
   */
  @Test
  void contrastTheSame503OnAKeptAliveConnectionIsFailed() throws Exception {
    OperationRecord r = answerThenRetryBelowIdem(false);
    assertEquals(Classification.SAFE, r.attempts().get(0).classification(), r.toString());
    assertEquals(OperationState.FAILED, r.state(), r.toString());
  }

  /**
   * A token-refresh interceptor below Idem: the keyed POST is answered 401, the interceptor asks
   * the (down) auth server for a new token with its own client, which throws ConnectException.
   * The keyed request had no effect (401) and its second request never left, but nothing in the
   * failure proves that: AMBIGUOUS.
   */
  @Test
  void a401AnsweredKeyedPostWhoseTokenRefreshCannotConnectIsUncertain() throws Exception {
    ServerSocket authDown = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    String authUrl = "http://127.0.0.1:" + authDown.getLocalPort() + "/token";
    authDown.close();
    ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    String base = "http://127.0.0.1:" + listener.getLocalPort();
    CompletableFuture<String> received = CompletableFuture.supplyAsync(() -> {
      try (listener; Socket s = listener.accept()) {
        String request = KeyedPosts.readRequest(s.getInputStream());
        OutputStream out = s.getOutputStream();
        out.write("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        s.getInputStream().read();  // until the client goes away
        return request;
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });
    OkHttpClient authClient = new OkHttpClient();
    Interceptor tokenRefresh = chain -> {
      Response first = chain.proceed(chain.request().newBuilder().header("Authorization", "Bearer old").build());
      if (first.code() != 401) {
        return first;
      }
      first.close();
      try (Response token = authClient.newCall(new Request.Builder().url(authUrl).post(RequestBody.create(new byte[0]))
          .build()).execute()) {
        return chain.proceed(chain.request().newBuilder().header("Authorization", "Bearer " + token.body().string())
            .build());
      }
    };
    IdempotentExecutor executor = f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).addInterceptor(tokenRefresh).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request post = KeyedPosts.order(base, op);
    Throwable thrown = assertThrows(IOException.class, () -> client.newCall(post).execute().close());
    client.connectionPool().evictAll();
    assertTrue(received.get(10, TimeUnit.SECONDS).startsWith("POST /orders "));
    authClient.dispatcher().executorService().shutdown();
    authClient.connectionPool().evictAll();
    OperationRecord r = f.record(op);
    String what = "the keyed POST was answered 401, then the call threw " + thrown + "; " + r;
    assertEquals(1, r.attempts().size(), what);
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), what);
    assertEquals(OperationState.UNCERTAIN, r.state(), what);
  }

  private OperationRecord answerThenRetryBelowIdem(boolean serverGoesDown) throws Exception {
    ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    String base = "http://127.0.0.1:" + listener.getLocalPort();
    CompletableFuture<String> received = CompletableFuture.supplyAsync(() -> {
      try (Socket s = listener.accept()) {
        String request = KeyedPosts.readRequest(s.getInputStream());
        OutputStream out = s.getOutputStream();
        if (serverGoesDown) {
          listener.close();  // before the answer: the retry's connect is refused whenever it comes
          out.write("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
              .getBytes(StandardCharsets.ISO_8859_1));
          out.flush();
        } else {
          out.write("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"
              .getBytes(StandardCharsets.ISO_8859_1));
          out.flush();
          s.getInputStream().read();  // keep the connection until the client goes away
          listener.close();
        }
        return request;
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });
    IdempotentExecutor executor = f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    AtomicInteger proceeds = new AtomicInteger();
    Interceptor retryOn503 = chain -> {
      proceeds.incrementAndGet();
      Response first = chain.proceed(chain.request());
      if (first.code() != 503) {
        return first;
      }
      first.close();
      proceeds.incrementAndGet();
      return chain.proceed(chain.request());
    };
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).addInterceptor(retryOn503).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request post = KeyedPosts.order(base, op);
    Throwable thrown = assertThrows(IOException.class, () -> client.newCall(post).execute().close());
    client.connectionPool().evictAll();
    assertTrue(received.get(10, TimeUnit.SECONDS).startsWith("POST /orders "));
    assertEquals(2, proceeds.get(), "the app's interceptor proceeded twice; threw " + thrown);
    OperationRecord r = f.record(op);
    assertEquals(1, r.attempts().size(), r.toString());
    return r;
  }
}
