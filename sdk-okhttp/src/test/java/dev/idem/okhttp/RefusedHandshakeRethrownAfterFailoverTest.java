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
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLHandshakeException;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.Test;

/**
 * Review of 08cbc46f, exception (b) of FollowUps.typeHiddenIfSentBefore: "an SSLHandshakeException
 * the call's own exchange failed with (identity in the cause chain), and no connect on the call
 * after the head, is the mutual-TLS server refusing the certificate: not sent". The identity proves
 * only that the <em>primary's</em> request was refused; it says nothing of what an interceptor below
 * Idem sent afterwards through a client of its own, which the call's listener never sees.
 *
 * <p>What was wrong (fixed by 8c7ebf68, which dropped the exception): the primary (TLS 1.3, client certificate required) refuses the app's
 * certificate (after a rotation its trust store lacks the new CA): its application never had the
 * request. A failover interceptor then sends the keyed POST to the standby region through its own
 * client; the standby reads all of it, key and body, and drops the connection before answering (it
 * may have placed the order). The interceptor rethrows the first failure with the later one
 * suppressed, the idiom OkHttp itself uses for route failures. That exception is the call's own
 * exchange failure, so Idem keeps it not sent: SAFE, the operation FAILED.
 *
 * <p>Why it matters: FAILED says "no effect, do it again under a new key" while the standby has
 * the keyed order: it is placed twice. e5af0790's broader exemption (any handshake failure with no
 * connect on the call after the head) gave the same FAILED; 08cbc46f's identity check narrows it to
 * the call's own exchange failure, which this interceptor rethrows. The attempt must be AMBIGUOUS
 * and the operation UNCERTAIN.
 */
class RefusedHandshakeRethrownAfterFailoverTest {
  private static final HeldCertificate SERVER = new HeldCertificate.Builder().commonName("localhost")
      .addSubjectAlternativeName("127.0.0.1").build();

  final Fixture f = new Fixture();

  @Test
  void thePrimarysRefusedHandshakeRethrownAfterTheStandbyReadTheKeyedPostIsNotFailed() throws Exception {
    HandshakeCertificates serverCerts = new HandshakeCertificates.Builder().heldCertificate(SERVER)
        .addTrustedCertificate(SERVER.certificate()).build();  // trusts no client certificate
    HandshakeCertificates clientCerts = new HandshakeCertificates.Builder()
        .addTrustedCertificate(SERVER.certificate()).build();
    try (ServerSocket primary = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        ServerSocket standby = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<String> primarySaw = KeyedPosts.mutualTlsRefusing(primary, serverCerts);
      // The standby has the keyed order, head and body, and goes away before it answers.
      CompletableFuture<String> standbySaw = KeyedPosts.readsOneRequestThenDrops(standby);
      String base = "https://127.0.0.1:" + primary.getLocalPort();
      String standbyUrl = "http://127.0.0.1:" + standby.getLocalPort();
      OkHttpClient standbyClient = new OkHttpClient();
      Interceptor failover = chain -> {
        try {
          return chain.proceed(chain.request());
        } catch (IOException primaryFailed) {
          Request again = chain.request().newBuilder()
              .url(chain.request().url().toString().replace(base, standbyUrl)).build();
          try {
            return standbyClient.newCall(again).execute();
          } catch (IOException standbyFailed) {
            primaryFailed.addSuppressed(standbyFailed);
            throw primaryFailed;
          }
        }
      };
      IdempotentExecutor executor = f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(1).build())
          .build();
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      OkHttpClient client = idem.install(new OkHttpClient.Builder()
          .sslSocketFactory(clientCerts.sslSocketFactory(), clientCerts.trustManager())).addInterceptor(failover).build();
      IdempotentOperation op = IdempotentOperation.of("create-payment");
      Request post = new Request.Builder().url(base + "/payments")
          .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

      IOException thrown = assertThrows(IOException.class, () -> client.newCall(post).execute().close());

      assertEquals("refused", primarySaw.get(10, TimeUnit.SECONDS), "the primary refused the certificate");
      String atStandby = standbySaw.get(10, TimeUnit.SECONDS);
      assertTrue(atStandby.startsWith("POST /payments ") && atStandby.endsWith(Fixture.ORDER)
          && atStandby.toLowerCase(Locale.ROOT).contains("idempotency-key"),
          "the standby had the keyed POST, head and body: " + atStandby);
      standbyClient.dispatcher().executorService().shutdown();
      standbyClient.connectionPool().evictAll();
      OperationRecord r = f.record(op);
      String what = "the standby read the keyed POST; the call threw " + thrown + "; journal: " + r;
      assertEquals(1, r.attempts().size(), what);
      assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), what);
      assertEquals(OperationState.UNCERTAIN, r.state(), what);
    }
  }
}
