package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.RequestSnapshot;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;

/**
 * The resumed and asynchronous attempts (each its own OkHttp call, through {@code transport} and
 * {@code asyncTransport}, whose client gets the guard added if it lacks it) with an
 * {@code Expect: 100-continue} header that an app network interceptor, after the guard, adds: the
 * server gets the keyed head and drops the connection, and the attempt must be ambiguous, never
 * "not sent" (see ReviewExpectBelowGuardTest for the live call). The server reads the head and
 * closes; no timing.
 */
class ExpectContinueAfterGuardResumeTest {
  final Fixture f = new Fixture();
  final IdempotentExecutor executor = f.executorBuilder()
      .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
  final IdemOkHttp idem = IdemOkHttp.builder(executor).build();
  final OkHttpClient client = idem.install(new OkHttpClient.Builder().retryOnConnectionFailure(false))
      .addNetworkInterceptor(chain -> chain.proceed(
          chain.request().newBuilder().header("Expect", "100-continue").build()))
      .build();

  @Test
  void syncResumeIsAmbiguous() throws Exception {
    assertHeadOutIsAmbiguous(id -> executor.resume(id, idem.transport(client)));
  }

  @Test
  void asyncResumeIsAmbiguous() throws Exception {
    assertHeadOutIsAmbiguous(id -> executor.resumeAsync(id, idem.asyncTransport(client)).get(10, TimeUnit.SECONDS));
  }

  @Test
  void asyncResumeOnAClientWithoutTheGuardIsAmbiguous() throws Exception {
    // A client built with only the interceptor and the app's network interceptor: the transport's
    // copy puts the guard first, so the header is still added after it.
    OkHttpClient bare = new OkHttpClient.Builder().retryOnConnectionFailure(false)
        .addInterceptor(idem.interceptor())
        .addNetworkInterceptor(chain -> chain.proceed(
            chain.request().newBuilder().header("Expect", "100-continue").build()))
        .build();
    assertHeadOutIsAmbiguous(id -> executor.resumeAsync(id, idem.asyncTransport(bare)).get(10, TimeUnit.SECONDS));
  }

  @FunctionalInterface
  interface Resume {
    void run(OperationId id) throws Exception;
  }

  private void assertHeadOutIsAmbiguous(Resume resume) throws Exception {
    try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<String> head = CompletableFuture.supplyAsync(() -> {
        try (Socket s = ss.accept()) {
          return ExpectContinueHeadersOutNotSentTest.readHead(s.getInputStream()); // then the connection drops
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      RequestSnapshot snapshot = RequestSnapshot.builder("POST",
              URI.create("http://127.0.0.1:" + ss.getLocalPort() + "/orders/42/cancel"))
          .body(Fixture.ORDER.getBytes(StandardCharsets.UTF_8), "application/json").build();
      OperationId id = executor.enqueue(Operation.builder("cancel-order", snapshot).build()).id();
      assertThrows(Exception.class, () -> resume.run(id));

      String received = head.get(10, TimeUnit.SECONDS).toLowerCase(Locale.ROOT);
      assertTrue(received.contains("expect: 100-continue") && received.contains(id.key().value().toLowerCase(Locale.ROOT)),
          "the server got the keyed head, sent for Expect: 100-continue: " + received);
      OperationRecord r = f.journal.find(id).orElseThrow();
      assertEquals(OperationState.UNCERTAIN, r.state(), "the server had the keyed head and may have acted on it: " + r);
      assertEquals(1, r.attempts().size(), r.toString());
      assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), r.toString());
    }
  }
}
