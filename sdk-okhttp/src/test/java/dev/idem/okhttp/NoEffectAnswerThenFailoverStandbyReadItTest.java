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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/**
 * Review of 08cbc46f, exception (a) of FollowUps.typeHiddenIfSentBefore: "the guard's kept first
 * answer proves no effect, so a later 'not sent' typed failure stays not sent". The guard only
 * sees the keyed call's own chain; a failover interceptor below Idem that re-sends the keyed
 * request through a client of its own is invisible to it, and the failure it finally throws says
 * nothing about the requests it sent before.
 *
 * <p>What was wrong (fixed by 8c7ebf68, which dropped the exception): the primary answers the keyed POST 503 (no effect). The failover interceptor
 * (the usual shape: try each standby region in turn, throw the last failure) sends it to standby A,
 * which reads the whole request, key and body, and drops the connection before answering (it may
 * have placed the order); standby B refuses the connection. The interceptor throws B's
 * ConnectException. Idem sees a "not sent" type after a 503 first answer and keeps it: SAFE, the
 * operation FAILED. Before 08cbc46f (e5af0790 alone) the same attempt was AMBIGUOUS.
 *
 * <p>Why it matters: FAILED tells the app "no effect, do it again under a new key": the order
 * standby A may have placed is placed a second time. The first answer proves only that the
 * <em>first</em> request had no effect, not that the failure's request is the only other one.
 */
class NoEffectAnswerThenFailoverStandbyReadItTest {
  final Fixture f = new Fixture();

  @Test
  void a503ThenAStandbyThatReadTheKeyedPostThenARefusedStandbyIsNotFailed() throws Exception {
    ServerSocket down = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    String standbyB = "http://127.0.0.1:" + down.getLocalPort();
    down.close();  // standby B: connection refused
    ServerSocket primary = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    ServerSocket standbyAListener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    String base = "http://127.0.0.1:" + primary.getLocalPort();
    String standbyA = "http://127.0.0.1:" + standbyAListener.getLocalPort();
    CompletableFuture<String> primaryGot = CompletableFuture.supplyAsync(() -> {
      try (primary; Socket s = primary.accept()) {
        String request = KeyedPosts.readRequest(s.getInputStream());
        OutputStream out = s.getOutputStream();
        out.write("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            .getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return request;
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });
    // Standby A has the keyed order, head and body, and goes away before it answers.
    CompletableFuture<String> standbyAGot = KeyedPosts.readsOneRequestThenDrops(standbyAListener);
    OkHttpClient standbyClient = new OkHttpClient();
    Interceptor failover = chain -> {
      Response first = chain.proceed(chain.request());
      if (first.code() != 503) {
        return first;
      }
      first.close();
      IOException last = null;
      for (String standby : List.of(standbyA, standbyB)) {
        Request again = chain.request().newBuilder().url(chain.request().url().toString().replace(base, standby))
            .build();
        try {
          return standbyClient.newCall(again).execute();
        } catch (IOException e) {
          last = e;
        }
      }
      throw last;
    };
    IdempotentExecutor executor = f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).addInterceptor(failover).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request post = new Request.Builder().url(base + "/orders")
        .post(okhttp3.RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

    IOException thrown = assertThrows(IOException.class, () -> client.newCall(post).execute().close());

    assertTrue(primaryGot.get(10, TimeUnit.SECONDS).startsWith("POST /orders "));
    String atA = standbyAGot.get(10, TimeUnit.SECONDS);
    assertTrue(atA.startsWith("POST /orders ") && atA.endsWith(Fixture.ORDER) && atA.toLowerCase(java.util.Locale.ROOT).contains("idempotency-key"),
        "standby A had the keyed POST, key, head and body: " + atA);
    standbyClient.dispatcher().executorService().shutdown();
    standbyClient.connectionPool().evictAll();
    client.connectionPool().evictAll();
    OperationRecord r = f.record(op);
    String what = "standby A read the keyed POST; the call threw " + thrown + "; journal: " + r;
    assertEquals(1, r.attempts().size(), what);
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), what);
    assertEquals(OperationState.UNCERTAIN, r.state(), what);
  }
}
