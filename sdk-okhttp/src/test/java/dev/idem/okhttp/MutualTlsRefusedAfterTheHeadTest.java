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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLHandshakeException;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A mutual-TLS server (a bank's, a payment network's) refusing the client's certificate, missing or
 * untrusted. Over TLS 1.3 the client finishes its handshake before the server judges the
 * certificate, so OkHttp writes the head and the body, key included, and the server's refusal comes
 * after, as an {@code SSLHandshakeException} that the call's own exchange fails with. The server's
 * TLS refused the connection and its application never had the request, yet the attempt is
 * AMBIGUOUS and the operation UNCERTAIN, on purpose: a TLS 1.2 server that renegotiates for a client
 * certificate after its application read the request fails the same exchange with the same
 * exception ({@link RenegotiatedClientAuthAfterTheAppReadTest}), and nothing on the client tells
 * the two apart. The operation can be sent again with its key once the certificate is fixed. The
 * type that the default table would call not sent is kept as a suppressed exception.
 *
 * <p>The server's TLS layer does not close the TCP connection under it (autoClose off), as a
 * server that closes at once would race the client's write, which would then fail with a
 * {@code SocketException} instead (AMBIGUOUS all the same, but not this exception).
 */
class MutualTlsRefusedAfterTheHeadTest {
  private static final HeldCertificate SERVER = new HeldCertificate.Builder().commonName("localhost")
      .addSubjectAlternativeName("127.0.0.1").build();
  private static final HeldCertificate UNTRUSTED_CLIENT = new HeldCertificate.Builder().commonName("app").build();

  final Fixture f = new Fixture();

  @ParameterizedTest(name = "{0}, {1}")
  @CsvSource({"interceptor, no client certificate", "interceptor, untrusted client certificate",
      "install, no client certificate", "install, untrusted client certificate"})
  void aServerRefusingTheClientCertificateAfterTheHeadIsAmbiguous(String how, String clientCert) throws Exception {
    HandshakeCertificates serverCerts = new HandshakeCertificates.Builder().heldCertificate(SERVER)
        .addTrustedCertificate(SERVER.certificate()).build(); // trusts no client certificate
    HandshakeCertificates.Builder cb = new HandshakeCertificates.Builder().addTrustedCertificate(SERVER.certificate());
    if (clientCert.startsWith("untrusted")) {
      cb.heldCertificate(UNTRUSTED_CLIENT);
    }
    HandshakeCertificates clientCerts = cb.build();
    IdempotentExecutor executor = f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient.Builder b = new OkHttpClient.Builder()
        .sslSocketFactory(clientCerts.sslSocketFactory(), clientCerts.trustManager());
    OkHttpClient client = how.equals("install") ? idem.install(b).build() : b.addInterceptor(idem.interceptor()).build();
    try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<String> server = KeyedPosts.mutualTlsRefusing(listener, serverCerts);
      IdempotentOperation op = IdempotentOperation.of("create-payment");
      Request post = new Request.Builder().url("https://127.0.0.1:" + listener.getLocalPort() + "/payments")
          .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

      IOException thrown = assertThrows(IOException.class, () -> client.newCall(post).execute().close());

      assertEquals("refused", server.get(10, TimeUnit.SECONDS),
          "the server's TLS refused the client's certificate: its application never saw the request");
      OperationRecord r = f.record(op);
      String what = "the call threw " + thrown + "; journal: " + r;
      assertEquals(1, r.attempts().size(), what);
      assertEquals(IOException.class.getName(), r.attempts().get(0).exceptionClass(), what);
      assertTrue(suppressesAHandshakeFailure(thrown), what);
      assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), what);
      assertEquals(OperationState.UNCERTAIN, r.state(), what);
      assertEquals(op.key(), r.id().key());
    }
  }

  /** Whether the handshake failure is kept, as a suppressed exception, in what the call threw. */
  private static boolean suppressesAHandshakeFailure(Throwable thrown) {
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      for (Throwable s : t.getSuppressed()) {
        if (s instanceof SSLHandshakeException) {
          return true;
        }
      }
    }
    return false;
  }
}
