package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import java.io.IOException;
import javax.net.ssl.SSLHandshakeException;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the hiding of "not sent" types after a head went out ({@code FollowUps.typeHiddenIfSentBefore})
 * must leave alone: an {@code SSLHandshakeException} on the connection that carried the head, with
 * no later connection. That is a mutual-TLS server (a bank's, a payment network's) refusing the
 * client's certificate over TLS 1.3: the client finishes its handshake before the server judges
 * the certificate, so OkHttp writes the head and the body, and the server's alert comes after. The
 * server's TLS refused the connection; its application never had the request, so the attempt is
 * not sent and the operation FAILED.
 *
 * <p>Against a real mutual-TLS server the client's failure is that exception or, when the server's
 * close wins the race with the client's write, a {@code SocketException}, which stays ambiguous (on
 * the safe side); so a network interceptor stands in for the alert here: it lets the request go
 * out on a real connection and then fails with the exception the alert raises.
 */
class MutualTlsRefusedIsNotSentTest {
  final Fixture f = new Fixture();

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"interceptor", "install"})
  void aHandshakeRefusedOnTheConnectionThatCarriedTheHeadIsNotSent(String how) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().code(201).body("{}").build());
      server.start();
      IdempotentExecutor executor = f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(1).build())
          .build();
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      OkHttpClient.Builder b = new OkHttpClient.Builder();
      OkHttpClient client = (how.equals("install") ? idem.install(b) : b.addInterceptor(idem.interceptor()))
          .addNetworkInterceptor(chain -> {
            try (Response ignored = chain.proceed(chain.request())) {
              throw new SSLHandshakeException("Received fatal alert: certificate_required");
            }
          }).build();
      IdempotentOperation op = IdempotentOperation.of("create-payment");
      Request post = new Request.Builder().url(server.url("/payments"))
          .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

      IOException thrown = assertThrows(IOException.class, () -> client.newCall(post).execute().close());

      assertEquals(1, server.getRequestCount(), "the head and body went out on one connection");
      OperationRecord r = f.record(op);
      String what = "the call threw " + thrown + "; journal: " + r;
      assertEquals(1, r.attempts().size(), what);
      assertEquals(Classification.SAFE, r.attempts().get(0).classification(), what);
      assertEquals(OperationState.FAILED, r.state(), what);
      assertEquals(op.key(), r.id().key());
    }
  }
}
