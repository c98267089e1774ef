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
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.Test;

/**
 * Review of e5af0790/08cbc46f, exception (b) of FollowUps.typeHiddenIfSentBefore: an
 * SSLHandshakeException that the call's own exchange failed with, with no connect after the head,
 * is taken as "the server's TLS refused the client's certificate, its application never had the
 * request". That holds for a TLS 1.3 server judging the certificate of the initial handshake; it
 * does not for TLS 1.2 renegotiation, where the server asks for the client certificate on demand
 * after its application has read the request (IIS "negotiate client certificate", Kestrel's
 * {@code ClientCertificateMode.DelayCertificate} and {@code GetClientCertificateAsync()}, Apache's
 * per-location {@code SSLVerifyClient}).
 *
 * <p>What was wrong (fixed by 8c7ebf68, which dropped the exception): the server (TLS 1.2, no client certificate asked in the handshake) reads the
 * keyed POST, head and body, in its application, then asks for a client certificate by
 * renegotiating; the app has none, the renegotiation fails, and OkHttp's exchange fails reading the
 * response with an SSLHandshakeException. Idem calls the attempt SAFE and the operation FAILED,
 * though the server's application had the whole keyed request.
 *
 * <p>Why it matters: FAILED means "no effect, safe to do again under a new key"; a server that acted
 * on the request before asking for the certificate has the order placed twice.
 */
class RenegotiatedClientAuthAfterTheAppReadTest {
  private static final HeldCertificate SERVER = new HeldCertificate.Builder().commonName("localhost")
      .addSubjectAlternativeName("127.0.0.1").build();

  final Fixture f = new Fixture();

  @Test
  void aRenegotiationRefusedAfterTheServersAppReadTheKeyedPostIsNotFailed() throws Exception {
    HandshakeCertificates serverCerts = new HandshakeCertificates.Builder().heldCertificate(SERVER)
        .addTrustedCertificate(SERVER.certificate()).build();
    HandshakeCertificates clientCerts = new HandshakeCertificates.Builder()
        .addTrustedCertificate(SERVER.certificate()).build();  // no client certificate
    try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<String> appRead = CompletableFuture.supplyAsync(() -> {
        try (Socket plain = listener.accept()) {
          SSLSocket tls = (SSLSocket) serverCerts.sslContext().getSocketFactory()
              .createSocket(plain, null, plain.getPort(), false);
          tls.setUseClientMode(false);
          tls.setEnabledProtocols(new String[] {"TLSv1.2"});
          tls.startHandshake();
          String request = KeyedPosts.readRequest(tls.getInputStream());
          // The application has the request; now it asks for the client's certificate.
          tls.setNeedClientAuth(true);
          try {
            tls.startHandshake();  // sends the HelloRequest; the renegotiation runs in the next read
            tls.getInputStream().read();
            tls.getOutputStream().write("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n".getBytes());
          } catch (IOException refused) {
            // the client had no certificate
          }
          try {
            plain.getInputStream().transferTo(OutputStream.nullOutputStream());
          } catch (IOException ignored) {
            // the client went away
          }
          return request;
        } catch (IOException e) {
          return e.toString();
        }
      });
      IdempotentExecutor executor = f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(1).build())
          .build();
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      OkHttpClient client = idem.install(new OkHttpClient.Builder()
          .sslSocketFactory(clientCerts.sslSocketFactory(), clientCerts.trustManager())).build();
      IdempotentOperation op = IdempotentOperation.of("create-payment");
      Request post = new Request.Builder().url("https://127.0.0.1:" + listener.getLocalPort() + "/payments")
          .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

      IOException thrown = assertThrows(IOException.class, () -> client.newCall(post).execute().close());
      client.connectionPool().evictAll();

      String request = appRead.get(10, TimeUnit.SECONDS);
      assertTrue(request.startsWith("POST /payments ") && request.endsWith(Fixture.ORDER)
          && request.toLowerCase(Locale.ROOT).contains("idempotency-key"),
          "the server's application read the keyed POST, head and body: " + request);
      OperationRecord r = f.record(op);
      String what = "the server's application read the keyed POST; the call threw " + thrown + "; journal: " + r;
      assertEquals(1, r.attempts().size(), what);
      assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), what);
      assertEquals(OperationState.UNCERTAIN, r.state(), what);
    }
  }
}
