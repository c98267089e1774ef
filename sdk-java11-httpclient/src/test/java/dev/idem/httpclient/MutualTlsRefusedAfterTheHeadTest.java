package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A mutual-TLS server (a bank's, a payment network's) refusing the client's certificate, missing or
 * untrusted. Over TLS 1.3 the client's handshake is done once it sent its Certificate and Finished,
 * before the server judged that certificate: the JDK asks the body's length for the head (begun)
 * and the server's refusal arrives after, as an {@code SSLHandshakeException}. The server's TLS
 * refused the connection (its {@code startHandshake} fails) and its application never had the
 * request; still the attempt is AMBIGUOUS and the operation UNCERTAIN, on purpose. A review asked
 * for FAILED here (what Idem said before this session, by the exception's type alone), and the
 * next one showed why not: a TLS 1.2 server that renegotiates for a client certificate after its
 * application read the request fails the exchange with the same exception after the same "begun",
 * and nothing on the client tells the two apart. UNCERTAIN is the safe side, and the operation can
 * be sent again with its key once the certificate is fixed.
 */
class MutualTlsRefusedAfterTheHeadTest {
  private static final HeldCertificate SERVER = new HeldCertificate.Builder().commonName("localhost")
      .addSubjectAlternativeName("127.0.0.1").build();
  /** A client certificate that the server does not trust (expired, another CA, a test one). */
  private static final HeldCertificate UNTRUSTED_CLIENT = new HeldCertificate.Builder().commonName("app").build();

  @ParameterizedTest(name = "{0}, {1}, {2}")
  @MethodSource("cases")
  void aServerRefusingTheClientCertificateAfterTheHeadIsAmbiguous(Mode mode, HttpClient.Version version, String clientCert)
      throws Exception {
    HandshakeCertificates serverCerts = new HandshakeCertificates.Builder().heldCertificate(SERVER)
        .addTrustedCertificate(SERVER.certificate()).build(); // trusts no client certificate here
    HandshakeCertificates.Builder cb = new HandshakeCertificates.Builder().addTrustedCertificate(SERVER.certificate());
    if (clientCert.equals("untrusted client certificate")) {
      cb.heldCertificate(UNTRUSTED_CLIENT);
    }
    HttpClient jdk = HttpClient.newBuilder().version(version).sslContext(cb.build().sslContext()).build();
    Fixture f = new Fixture(jdk, b -> { });
    try (SSLServerSocket ss = (SSLServerSocket) serverCerts.sslContext().getServerSocketFactory()
        .createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      ss.setNeedClientAuth(true);
      CompletableFuture<String> server = CompletableFuture.supplyAsync(() -> {
        try (SSLSocket s = (SSLSocket) ss.accept()) {
          s.startHandshake();
          return "handshake completed, the application read " + s.getInputStream().read();
        } catch (SSLHandshakeException e) {
          return "refused";
        } catch (IOException e) {
          return e.toString();
        }
      });
      IdempotencyKey key = IdempotencyKey.generate();
      OperationCall call = f.client.operation("create-payment").key(key)
          .policy(RetryPolicy.builder().maxAttempts(1).build());
      HttpRequest request = Fixture.post(URI.create("https://127.0.0.1:" + ss.getLocalPort() + "/payments"),
          "{\"amount\":100}");
      OperationException thrown = f.failure(mode, call, request);
      assertEquals("refused", server.get(10, TimeUnit.SECONDS),
          "the server's TLS refused the client's certificate: its application never saw the request");

      OperationRecord r = f.record(thrown.operationId());
      assertEquals(1, r.attempts().size(), r.attempts().toString());
      AttemptRecord a = r.attempts().get(0);
      assertEquals(OperationState.UNCERTAIN, r.state(), r.toString());
      assertEquals(Classification.AMBIGUOUS, a.classification(), a.toString());
      assertEquals(key, r.id().key());
    }
  }

  static Stream<Arguments> cases() {
    return Stream.of(Mode.values()).flatMap(mode -> Stream.of(HttpClient.Version.HTTP_1_1, HttpClient.Version.HTTP_2)
        .flatMap(v -> Stream.of("no client certificate", "untrusted client certificate")
            .map(c -> Arguments.of(mode, v, c))));
  }
}
