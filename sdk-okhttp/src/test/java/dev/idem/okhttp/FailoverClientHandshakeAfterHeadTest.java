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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.Test;

/**
 * Review of e5af0790: the SSLHandshakeException exemption in FollowUps.typeHiddenIfSentBefore
 * ("on the connection that carried the head it is a mutual-TLS refusal: not sent") decides "the
 * connection that carried the head" by the absence of a connect event on the keyed call's own
 * listener. A later connection made by another OkHttp call (an interceptor below Idem that fails
 * over to a standby host with its own client, as failover interceptors commonly do) fires no event
 * there.
 *
 * <p>What was wrong (found in review, fixed in FollowUps.typeHiddenIfSentBefore): the primary server read the keyed POST, head and body, and dropped the
 * connection without an answer (the effect may exist); the failover's handshake with the standby
 * fails (untrusted/expired certificate: an SSLHandshakeException). That failure reaches Idem with
 * its type, the attempt is SAFE and the operation FAILED. The same interceptor failing over with a
 * refused connect or an unknown host is (rightly) AMBIGUOUS after e5af0790, so only the TLS case
 * leaks through: the head of the keyed request went out and the result is still FAILED.
 *
 * <p>Why it matters: FAILED means "no effect, safe to do again under a new key": the order the
 * primary may have placed is placed a second time.
 */
class FailoverClientHandshakeAfterHeadTest {
  final Fixture f = new Fixture();

  @Test
  void aKeyedPostThePrimaryReadIsNotFailedWhenTheFailoverClientsHandshakeFails() throws Exception {
    HeldCertificate untrusted = new HeldCertificate.Builder().commonName("localhost")
        .addSubjectAlternativeName("127.0.0.1").build();
    HandshakeCertificates certs = new HandshakeCertificates.Builder().heldCertificate(untrusted).build();
    try (ServerSocket standby = certs.sslContext().getServerSocketFactory()
        .createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture.runAsync(() -> {
        try (Socket s = standby.accept()) {
          s.getInputStream().read();  // the handshake, until the client gives up on the certificate
        } catch (IOException expected) {
          // the client's handshake failed
        }
      });
      ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
      String base = "http://127.0.0.1:" + listener.getLocalPort();
      // The primary has the keyed order, then its connection drops before the answer.
      CompletableFuture<String> received = KeyedPosts.readsOneRequestThenDrops(listener);
      OkHttpClient standbyClient = new OkHttpClient();
      String standbyUrl = "https://127.0.0.1:" + standby.getLocalPort();
      Interceptor failover = chain -> {
        try {
          return chain.proceed(chain.request());
        } catch (IOException primaryFailed) {
          Request again = chain.request().newBuilder()
              .url(chain.request().url().toString().replace(base, standbyUrl)).build();
          return standbyClient.newCall(again).execute();
        }
      };
      IdempotentExecutor executor = f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(1).build())
          .build();
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      OkHttpClient client = idem.install(new OkHttpClient.Builder()).addInterceptor(failover).build();
      IdempotentOperation op = IdempotentOperation.of("create-order");
      Request post = new Request.Builder().url(base + "/orders")
          .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

      IOException thrown = assertThrows(IOException.class, () -> client.newCall(post).execute().close());

      String request = received.get(10, TimeUnit.SECONDS);
      assertTrue(request.startsWith("POST /orders ") && request.endsWith(Fixture.ORDER),
          "the primary had the keyed POST, head and body: " + request);
      standbyClient.dispatcher().executorService().shutdown();
      OperationRecord r = f.record(op);
      String what = "the primary read the keyed POST; the call threw " + thrown + "; journal: " + r;
      assertEquals(1, r.attempts().size(), what);
      assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), what);
      assertEquals(OperationState.UNCERTAIN, r.state(), what);
    }
  }
}
