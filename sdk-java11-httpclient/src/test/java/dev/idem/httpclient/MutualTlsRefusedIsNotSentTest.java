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
 * Found in review of 442706a0 ("a begun request is never 'not sent' by its failure's type"), which hid it: a
 * regression for every app that calls a mutual-TLS API (banks, payment networks, B2B APIs) with a
 * missing, expired or untrusted client certificate. Over TLS 1.3 the client's handshake is done
 * once it has sent its Certificate and Finished, before the server has judged that certificate:
 * the JDK then asks the body's length for the head (the PullTrackingPublisher says "begun") and the
 * server's refusal arrives after, as an {@code SSLHandshakeException} ("Received fatal alert:
 * certificate_required" / "bad_certificate"). The server's TLS layer refused the connection: its
 * application never got a byte of the request (here the server's {@code startHandshake} itself
 * fails), so nothing can have been processed, and before the commit the attempt was SAFE and the
 * operation FAILED. The commit now hides the handshake failure's type whenever the tracker says
 * begun, so every such call is AMBIGUOUS and ends UNCERTAIN: the app is told the payment may have
 * been made and must reconcile by hand, on every call, until the certificate is fixed; and with
 * more attempts each one is retried as ambiguous. Deterministic here (20 of 20 runs UNCERTAIN with
 * the commit, FAILED without it); a server that answers faster than the client composes its head
 * only gives FAILED sooner (not begun), which is what this test expects anyway.
 */
class MutualTlsRefusedIsNotSentTest {
  private static final HeldCertificate SERVER = new HeldCertificate.Builder().commonName("localhost")
      .addSubjectAlternativeName("127.0.0.1").build();
  /** A client certificate that the server does not trust (expired, another CA, a test one). */
  private static final HeldCertificate UNTRUSTED_CLIENT = new HeldCertificate.Builder().commonName("app").build();

  @ParameterizedTest(name = "{0}, {1}, {2}")
  @MethodSource("cases")
  void serverRefusingTheClientCertificateIsNotSent(Mode mode, HttpClient.Version version, String clientCert)
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
      assertEquals(OperationState.FAILED, r.state(), "the server refused the TLS handshake and processed nothing,"
          + " yet the operation is reported as possibly applied: " + r);
      assertEquals(Classification.SAFE, a.classification(), a.toString());
      assertEquals(key, r.id().key());
    }
  }

  static Stream<Arguments> cases() {
    return Stream.of(Mode.values()).flatMap(mode -> Stream.of(HttpClient.Version.HTTP_1_1, HttpClient.Version.HTTP_2)
        .flatMap(v -> Stream.of("no client certificate", "untrusted client certificate")
            .map(c -> Arguments.of(mode, v, c))));
  }
}
