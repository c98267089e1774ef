package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpTimeoutException;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The body rule ("no byte of the body taken, so the server cannot have acted") must not outlive
 * the request's head. The JDK client composes and writes the head first (Http1Exchange
 * sendHeadersAsync: Http1Request.headers(), then the write; on HTTP/2 Stream.sendHeadersAsync and
 * its HEADERS frame) and subscribes to the body publisher only once the head was handed to the
 * connection (sendBodyAsync, after headersSentCF; Stream.sendBodyImpl). A failure in between (its
 * request timeout, {@code HttpRequest.timeout}, firing there) leaves a server that acts on the head
 * (a servlet runs once the head is parsed; a handler that ignores the body acts then; an HTTP/2
 * server that dispatches on HEADERS) with the keyed request. Before the fix such an attempt was
 * recorded as not sent (SAFE), and maxAttempts(1) ended FAILED. Now "not sent" needs the head not
 * begun: the client had not asked the body's length, which the head carries and which the JDK asks
 * just before composing it, on every protocol.
 *
 * <p>The window is not held open inside the real JDK client (nothing of the app's runs between
 * the head write and the body pull but the JDK's own executor hop), so the first test uses a
 * client that follows the JDK's order and writes a real head to a plain socket on an ephemeral
 * port. The others pin what the fix rests on with the real JDK client: a head that reached a
 * server is never not sent, and a failure before any connection still is.
 */
class HeadOutBodyNotTakenTest {
  @ParameterizedTest
  @EnumSource(Mode.class)
  void headWrittenThenRequestTimeoutBeforeTheBodyIsUncertain(Mode mode) throws Exception {
    Fixture f = new Fixture();
    ScriptedClient scripted = ScriptedClient.headThenFailure(new HttpTimeoutException("request timed out"));
    IdempotentHttpClient client = IdempotentHttpClient.builder(scripted).idempotentExecutor(f.executor).build();
    try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<String> head = headThenReset(ss);
      IdempotencyKey key = IdempotencyKey.generate();
      OperationCall call = client.operation("cancel-order").key(key)
          .policy(RetryPolicy.builder().maxAttempts(1).build());
      OperationException thrown = f.failure(mode, call, Fixture.post(URI.create("http://127.0.0.1:"
          + ss.getLocalPort() + "/orders/42/cancel"), "{\"qty\":1}"));

      assertKeyedHead(head.get(10, TimeUnit.SECONDS), key);
      assertEquals(0, scripted.bytesTaken.get(), "the client never took a byte of the body");
      OperationRecord r = f.record(thrown.operationId());
      assertEquals(OperationState.UNCERTAIN, r.state(),
          "the server had the keyed head and may have applied it, yet the attempt was recorded as not sent: " + r);
      assertOneAttempt(r, Classification.AMBIGUOUS, key);
    } finally {
      scripted.closeHeads();
    }
  }

  /** The real JDK client: a server that reads the keyed head and resets the connection. */
  @ParameterizedTest
  @EnumSource(Mode.class)
  void headThatReachedTheServerIsNeverNotSent(Mode mode) throws Exception {
    Fixture f = new Fixture();
    try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<String> head = headThenReset(ss);
      IdempotencyKey key = IdempotencyKey.generate();
      OperationCall call = f.client.operation("cancel-order").key(key)
          .policy(RetryPolicy.builder().maxAttempts(1).build());
      OperationException thrown = f.failure(mode, call, Fixture.post(URI.create("http://127.0.0.1:"
          + ss.getLocalPort() + "/orders/42/cancel"), "{\"qty\":1}"));

      assertKeyedHead(head.get(10, TimeUnit.SECONDS), key);
      OperationRecord r = f.record(thrown.operationId());
      assertEquals(OperationState.UNCERTAIN, r.state(), r.toString());
      assertOneAttempt(r, Classification.AMBIGUOUS, key);
    }
  }

  /**
   * The twin before the head, through the real JDK client: a proxy selector that fails runs before
   * any connection, so the head was never begun and the attempt stays not sent (FAILED).
   */
  @ParameterizedTest
  @EnumSource(Mode.class)
  void failureBeforeAnyConnectionStaysNotSent(Mode mode) throws Exception {
    Fixture f = new Fixture();
    HttpClient failingProxy = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .proxy(new ProxySelector() {
          @Override
          public List<Proxy> select(URI uri) {
            throw new IllegalStateException("proxy selector failed");
          }

          @Override
          public void connectFailed(URI uri, SocketAddress sa, IOException ioe) {}
        }).build();
    IdempotentHttpClient client = IdempotentHttpClient.builder(failingProxy).idempotentExecutor(f.executor).build();
    IdempotencyKey key = IdempotencyKey.generate();
    OperationCall call = client.operation("cancel-order").key(key)
        .policy(RetryPolicy.builder().maxAttempts(1).build());
    OperationException thrown = f.failure(mode, call, Fixture.post(URI.create("http://127.0.0.1:9/orders/42/cancel"),
        "{\"qty\":1}"));

    OperationRecord r = f.record(thrown.operationId());
    assertEquals(OperationState.FAILED, r.state(), r.toString());
    assertOneAttempt(r, Classification.SAFE, key);
  }

  /**
   * The twin after a connection but before the head, through the real JDK client: the JDK composes
   * the head only once the TLS handshake is done (AsyncSSLConnection.finishConnect), so a handshake
   * that fails stays not sent (FAILED). It fails here on the client's side, at its ClientHello (the
   * only protocol it offers is one the JDK disables), after the server accepted the connection.
   *
   * <p>Not a server that answers the ClientHello in plain text, as this test did first: that races
   * inside the JDK. The reader's failed unwrap leaves the engine wanting to wrap an alert, and a
   * writer still in its loop from the ClientHello wraps it, gets CLOSED and completes the ALPN future
   * normally (SSLFlowDelegate.Writer.processData, "complete ALPN if not yet completed", JDK 17 and
   * 25) before the reader fails it. The JDK then composes the head on the dead connection, and the
   * attempt is recorded ambiguous: on the safe side (UNCERTAIN for a request that could not have
   * left), which CI saw once, on a loaded machine. Nothing here reads a byte from the server, so
   * nothing races.
   *
   * <p>An empty body too (review rv-notsent): the JDK asks its length for the head all the same, so
   * {@code noBody()} and a zero-length array are tracked and end FAILED, not UNCERTAIN.
   */
  @ParameterizedTest
  @MethodSource("modesAndBodies")
  void failedTlsHandshakeStaysNotSent(Mode mode, String body) throws Exception {
    Fixture f = new Fixture();
    SSLParameters disabledOnly = new SSLParameters();
    disabledOnly.setProtocols(new String[] {"TLSv1"}); // in jdk.tls.disabledAlgorithms since JDK 16
    HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslParameters(disabledOnly).build();
    IdempotentHttpClient client = IdempotentHttpClient.builder(jdk).idempotentExecutor(f.executor).build();
    try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<Integer> firstByte = CompletableFuture.supplyAsync(() -> {
        try (Socket s = ss.accept()) {
          return s.getInputStream().read(); // -1 once the client gives up: it sent nothing
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      IdempotencyKey key = IdempotencyKey.generate();
      OperationCall call = client.operation("cancel-order").key(key)
          .policy(RetryPolicy.builder().maxAttempts(1).build());
      URI uri = URI.create("https://127.0.0.1:" + ss.getLocalPort() + "/orders/42/cancel");
      HttpRequest request = switch (body) {
        case "noBody()" -> HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.noBody()).build();
        case "new byte[0]" -> HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.ofByteArray(new byte[0]))
            .build();
        default -> Fixture.post(uri, body);
      };
      OperationException thrown = f.failure(mode, call, request);
      assertEquals(-1, firstByte.get(10, TimeUnit.SECONDS), "the server accepted the connection and got no byte");

      boolean handshake = false;
      for (Throwable t = thrown; t != null; t = t.getCause()) {
        handshake |= t instanceof SSLHandshakeException;
      }
      assertTrue(handshake, "the handshake failed (not the request timeout): " + thrown);
      OperationRecord r = f.record(thrown.operationId());
      assertEquals(OperationState.FAILED, r.state(), r.toString());
      assertOneAttempt(r, Classification.SAFE, key);
    }
  }

  static Stream<Arguments> modesAndBodies() {
    return Stream.of(Mode.values()).flatMap(mode -> Stream.of("{\"qty\":1}", "noBody()", "new byte[0]")
        .map(body -> Arguments.of(mode, body)));
  }

  /** A server that reads one request head and resets the connection: it acted on the head. */
  private static CompletableFuture<String> headThenReset(ServerSocket ss) {
    return CompletableFuture.supplyAsync(() -> {
      try (Socket s = ss.accept()) {
        String h = ExpectContinueHeadersOutNotSentTest.readHead(s.getInputStream());
        s.setSoLinger(true, 0);
        return h;
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });
  }

  private static void assertKeyedHead(String head, IdempotencyKey key) {
    assertTrue(head.toLowerCase(Locale.ROOT).contains(key.value().toLowerCase(Locale.ROOT)),
        "the server got the keyed request head: " + head);
  }

  private static void assertOneAttempt(OperationRecord r, Classification expected, IdempotencyKey key) {
    assertEquals(1, r.attempts().size(), r.attempts().toString());
    AttemptRecord a = r.attempts().get(0);
    assertEquals(expected, a.classification(), a.toString());
    assertEquals(key, r.id().key(), "the operation keeps the key the server saw");
  }
}
