package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/**
 * A client built with {@link IdemOkHttp#install} (guard included) whose app adds, after it, an
 * application interceptor that proceeds a second time when the first proceed fails or gets a
 * gateway error (the common "retry once" interceptor; {@code install}'s Javadoc puts interceptors
 * added after it below Idem's, "on every attempt", and {@code FollowUpGuard} exists to stop their
 * second request). The server reads the keyed POST, head and body, then goes down.
 *
 * <p>What was wrong (found in review, fixed by FollowUps.typeHiddenIfSentBefore): the second
 * {@code proceed} needs a new connection, and OkHttp's
 * {@code ConnectInterceptor} runs before the network interceptors, so the guard never sees it: the
 * new connection is refused, and that {@link java.net.ConnectException} is what reaches Idem.
 * {@code FollowUps.proceed} / {@code ChainTransport.send} rethrow it unchanged (the body was
 * written, so {@code FollowUps.notSent} declines, but the exception keeps its type), and the
 * default classifier reads it as "not sent": the attempt is SAFE and the operation FAILED,
 * although the server had the keyed request. Had the second request's connect succeeded, the
 * guard would have refused it and {@code FollowUps.answeredWithoutEffect} would have kept the
 * attempt AMBIGUOUS (it only accepts a first answer that proves no effect; here there is none, or
 * a 502 the table calls AMBIGUOUS). The verdict thus hangs on whether the server's listener was
 * still up for a request that never mattered.
 *
 * <p>Why it matters: FAILED means "no effect, safe to do again under a new key"; the app (or the
 * user) places the order a second time. Any "not sent" type does it: a refused connect, an
 * unknown host after a DNS change, no route, a TLS handshake failure or a connect timeout on the
 * second connection.
 */
class InterceptorRetryBelowIdemRefusedTest {
  final Fixture f = new Fixture();

  @Test
  void aKeyedPostTheServerReadThenDroppedIsUncertainWhenAnInterceptorBelowIdemRetriesIntoARefusedConnect()
      throws Exception {
    assertSecondConnectRefusedIsUncertain(false);
  }

  @Test
  void aKeyedPostAnswered502ThenRetriedBelowIdemIntoARefusedConnectIsUncertain() throws Exception {
    assertSecondConnectRefusedIsUncertain(true);
  }

  /**
   * The same through {@link IdemOkHttp#callFactory}'s {@code enqueue}, whose attempts are OkHttp
   * calls of their own ({@code LiveCallTransport}); the interceptor below Idem runs on each.
   */
  @Test
  void anEnqueuedCallFactoryCallIsUncertainToo() throws Exception {
    assertSecondConnectRefusedIsUncertain(false, true);
  }

  private void assertSecondConnectRefusedIsUncertain(boolean answer502) throws Exception {
    assertSecondConnectRefusedIsUncertain(answer502, false);
  }

  private void assertSecondConnectRefusedIsUncertain(boolean answer502, boolean enqueued) throws Exception {
    ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    String base = "http://127.0.0.1:" + listener.getLocalPort();
    CompletableFuture<String> received = CompletableFuture.supplyAsync(() -> {
      try (Socket s = listener.accept()) {
        String request = KeyedPosts.readRequest(s.getInputStream());
        // The server (or the gateway before it) has the keyed order and goes down: listener first,
        // so that the second request's connect is refused, whenever it comes.
        listener.close();
        if (answer502) {
          OutputStream out = s.getOutputStream();
          out.write("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
              .getBytes(StandardCharsets.ISO_8859_1));
          out.flush();
        }
        return request;  // closing the socket without an answer when !answer502
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });
    IdempotentExecutor executor = f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    AtomicInteger proceeds = new AtomicInteger();
    Interceptor retryOnce = chain -> {
      proceeds.incrementAndGet();
      try {
        Response first = chain.proceed(chain.request());
        if (first.code() != 502) {
          return first;
        }
        first.close();
      } catch (IOException e) {
        // retried below
      }
      proceeds.incrementAndGet();
      return chain.proceed(chain.request());
    };
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).addInterceptor(retryOnce).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request post = KeyedPosts.order(base, op);

    Throwable thrown;
    if (enqueued) {
      CallFactoryTest.Result result = new CallFactoryTest.Result();
      idem.callFactory(client).newCall(post).enqueue(result);
      thrown = assertThrows(ExecutionException.class, result::get).getCause();
    } else {
      thrown = assertThrows(IOException.class, () -> client.newCall(post).execute().close());
    }

    String request = received.get(10, TimeUnit.SECONDS);
    KeyedPosts.assertHadTheKeyedPost(request, op);
    assertEquals(2, proceeds.get(), "the app's interceptor proceeded twice");
    OperationRecord r = f.record(op);
    String what = "the server had the keyed POST; the call threw " + thrown + "; journal: " + r;
    assertEquals(1, r.attempts().size(), what);
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), what);
    assertEquals(OperationState.UNCERTAIN, r.state(), what);
  }
}
