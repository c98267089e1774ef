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
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Dns;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.Test;

/**
 * A keyed POST on a client with {@link IdemOkHttp#interceptor()} alone (OkHttp's defaults
 * otherwise, redirects on) is answered {@code 303 See Other}, the Post/Redirect/Get answer of a
 * server that has processed it, and the server goes down right after (listener closed, so the GET
 * OkHttp follows the 303 with is refused).
 *
 * <p>What was wrong (found in review, fixed by FollowUps.typeHiddenIfSentBefore): OkHttp's {@code RetryAndFollowUpInterceptor} follows the 303 with a bodyless
 * GET (the one-shot body does not stop that, and no {@code FollowUpGuard} holds the Location back on
 * this client). The GET's connect is refused, and that {@link java.net.ConnectException} is all
 * that reaches Idem: {@code FollowUps.proceed} rethrows it (the body was written, so
 * {@code notSent} declines, but nothing replaces the exception's type), and the default classifier
 * reads a ConnectException in the cause chain as "not sent": the attempt is recorded SAFE and the
 * operation ends FAILED ("nothing took effect") although the server received the keyed POST, and
 * body, and answered it with a 303 that the default table itself calls AMBIGUOUS ("a redirect to
 * GET elsewhere, which may follow the request's effect"). {@link IdemOkHttp#interceptor()}'s
 * Javadoc promises the opposite: with the interceptor alone a followed 301, 302 or 303 "counts as
 * ambiguous". When the GET's connect succeeds, {@code FollowUps} sees {@code priorResponse()} and
 * does make it ambiguous; only a follow-up whose new connection fails (refused, unknown host, no
 * route, TLS handshake, connect timeout: the default table's "not sent" types) slips through.
 *
 * <p>Why it matters: FAILED tells the app that the order was not placed, so it may place it again
 * under a new key (a duplicate order), or tell the user it failed when it succeeded. The
 * java.net.http adapter already hands such failures on with their type suppressed once the request
 * may have begun (AttemptSender, commit "a begun request is never 'not sent' by its failure's
 * type"); the OkHttp adapter had no equivalent.
 */
class RedirectFollowUpRefusedTest {
  final Fixture f = new Fixture();

  @Test
  void aKeyedPostAnswered303WhoseFollowUpGetIsRefusedIsUncertainNotFailed() throws Exception {
    assertFollowUpFailureIsUncertain(null);
  }

  /** The same with the 303 pointing at another host, which no longer resolves (a DNS change). */
  @Test
  void aKeyedPostAnswered303ToAHostThatNoLongerResolvesIsUncertainNotFailed() throws Exception {
    assertFollowUpFailureIsUncertain("http://orders.example.test");
  }

  /**
   * The same with the 303 pointing at an HTTPS host whose certificate the client does not trust:
   * the follow-up's handshake fails with an SSLHandshakeException, on a later connection.
   */
  @Test
  void aKeyedPostAnswered303ToAHostWithAnUntrustedCertificateIsUncertainNotFailed() throws Exception {
    HeldCertificate untrusted = new HeldCertificate.Builder().commonName("localhost")
        .addSubjectAlternativeName("127.0.0.1").build();
    HandshakeCertificates certs = new HandshakeCertificates.Builder().heldCertificate(untrusted).build();
    try (ServerSocket tls = certs.sslContext().getServerSocketFactory()
        .createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture.runAsync(() -> {
        try (Socket s = tls.accept()) {
          s.getInputStream().read(); // the handshake, until the client gives up on the certificate
        } catch (IOException expected) {
          // the client's handshake failed
        }
      });
      assertFollowUpFailureIsUncertain("https://127.0.0.1:" + tls.getLocalPort());
    }
  }

  /** @param elsewhere where the 303 points (scheme, host, port), or null for the server itself */
  private void assertFollowUpFailureIsUncertain(String elsewhere) throws Exception {
    ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    String base = "http://127.0.0.1:" + listener.getLocalPort();
    CompletableFuture<String> received = CompletableFuture.supplyAsync(() -> {
      try (Socket s = listener.accept()) {
        String request = KeyedPosts.readRequest(s.getInputStream());
        // The server processed the order and goes down: listener first, so the follow-up GET that
        // OkHttp sends for the 303 finds nobody listening (no race with OkHttp's next connect).
        listener.close();
        OutputStream out = s.getOutputStream();
        String location = (elsewhere != null ? elsewhere : base) + "/orders/1";
        out.write(("HTTP/1.1 303 See Other\r\nLocation: " + location + "\r\nContent-Length: 0\r\n"
            + "Connection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return request;
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });
    IdempotentExecutor executor = f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    // The interceptor alone, OkHttp's defaults otherwise (as IdemOkHttp.interceptor() documents).
    // The app's resolver knows the first host only.
    Dns dns = host -> {
      if (host.equals("127.0.0.1")) {
        return List.of(InetAddress.getLoopbackAddress());
      }
      throw new UnknownHostException(host);
    };
    OkHttpClient client = new OkHttpClient.Builder().addInterceptor(idem.interceptor()).dns(dns).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request post = KeyedPosts.order(base, op);

    IOException thrown = assertThrows(IOException.class, () -> client.newCall(post).execute().close());

    String request = received.get(10, TimeUnit.SECONDS);
    KeyedPosts.assertHadTheKeyedPost(request, op);
    OperationRecord r = f.record(op);
    String what = "the server had the keyed POST and answered 303; the call threw " + thrown + "; journal: " + r;
    assertEquals(1, r.attempts().size(), what);
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), what);
    assertEquals(OperationState.UNCERTAIN, r.state(), what);
  }
}
