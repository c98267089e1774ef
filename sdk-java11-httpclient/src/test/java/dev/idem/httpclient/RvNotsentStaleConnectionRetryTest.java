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
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.NoRouteToHostException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Review (rv-notsent): the JDK client's own retry of a request that went out on a stale pooled
 * connection. MultiExchange retries once, on a new connection, a GET/HEAD (any method with
 * jdk.httpclient.enableAllMethodRetry) whose reused HTTP/1.1 connection closed before any byte of
 * the answer (ConnectionExpiredException): the head, key included, was written on the old
 * connection and the server had it. If the retry's connect is refused (the server went down right
 * after it read the request, a restart, a load balancer draining), the exchange fails with the
 * retry's ConnectException, and AttemptSender.classify calls every ConnectException "could not
 * connect; no byte of the request was sent" without asking whether the head went out before: the
 * operation ends FAILED although the server has the keyed request.
 */
class RvNotsentStaleConnectionRetryTest {
  /**
   * maxAttempts 1, and the executor's usual 4 (the server crashed right after it read the request
   * and stays down: every later attempt is refused too, so every attempt is "not sent").
   */
  @ParameterizedTest(name = "{0}, maxAttempts {1}")
  @CsvSource({"SYNC, 1", "ASYNC, 1", "SYNC, 4", "ASYNC, 4"})
  void headWrittenOnAStaleConnectionThenRefusedRetryIsNotNotSent(Mode mode, int maxAttempts) throws Exception {
    Fixture f = new Fixture();
    HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    IdempotentHttpClient client = IdempotentHttpClient.builder(jdk).idempotentExecutor(f.executor).build();
    ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    URI base = URI.create("http://127.0.0.1:" + ss.getLocalPort());
    CompletableFuture<String> secondHead = CompletableFuture.supplyAsync(() -> {
      try (Socket s = ss.accept()) {
        InputStream in = s.getInputStream();
        ExpectContinueHeadersOutNotSentTest.readHead(in);
        s.getOutputStream().write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            .getBytes(StandardCharsets.ISO_8859_1));
        s.getOutputStream().flush();
        // The same (pooled) connection carries the second keyed request: the server has it and
        // may apply it; then it goes down before answering (listener first, so the retry is refused).
        String head = ExpectContinueHeadersOutNotSentTest.readHead(in);
        ss.close();
        return head;
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });

    // Warm-up: a keyed call that succeeds and leaves its connection in the pool.
    IdempotentHttpResponse<String> first = client.operation("get-order").key(IdempotencyKey.generate())
        .send(HttpRequest.newBuilder(base.resolve("/orders/41")).GET().build(), BodyHandlers.ofString());
    assertEquals(200, first.statusCode());

    IdempotencyKey key = IdempotencyKey.generate();
    OperationCall call = client.operation("get-order").key(key)
        .policy(maxAttempts == 1 ? RetryPolicy.builder().maxAttempts(1).build() : Fixture.POLICY);
    HttpRequest request = HttpRequest.newBuilder(base.resolve("/orders/42")).GET().build();
    OperationException thrown = f.failure(mode, call, request);

    String head = secondHead.get(10, TimeUnit.SECONDS);
    assertTrue(head.toLowerCase(Locale.ROOT).contains(key.value().toLowerCase(Locale.ROOT)),
        "the server got the keyed request head: " + head);
    OperationRecord r = f.record(thrown.operationId());
    assertEquals(maxAttempts, r.attempts().size(), r.attempts().toString());
    AttemptRecord a = r.attempts().get(0);
    assertEquals(OperationState.UNCERTAIN, r.state(), "the server had the keyed head (on the stale connection),"
        + " then the JDK's retry was refused; the attempt must not be 'not sent': " + r + " / " + thrown);
    assertEquals(Classification.AMBIGUOUS, a.classification(), a.toString());
  }

  /**
   * The same branch for a request with a body, whose tracker knows better: a client that took the
   * whole body and then failed with a ConnectException (the JDK with
   * jdk.httpclient.enableAllMethodRetry after a stale connection, or an app HttpClient decorator
   * that retries a failed exchange itself and whose retry's connect is refused). classify() checked
   * "instanceof ConnectException" before the PullTrackingPublisher's verdict (begun), so the
   * attempt was "not sent" although every byte of the keyed request was handed over.
   *
   * <p>And every other failure that the default table calls not sent by its type, which came
   * through untouched before: an unknown host or no route on the retry's lookup, its connect timing
   * out, a TLS handshake failing (on a new connection, or on the one that carried the head: see
   * MutualTlsRefusedAfterTheHeadTest).
   */
  @ParameterizedTest(name = "{0}, {1} {2}")
  @MethodSource("modesAndNotSentTypes")
  void aNotSentTypeAfterTheRequestBeganIsAmbiguous(Mode mode, String method,
      String name, Exception failure, OperationState expected) throws Exception {
    Fixture f = new Fixture();
    ScriptedClient scripted = new ScriptedClient(failure, true);
    IdempotentHttpClient client = IdempotentHttpClient.builder(scripted).idempotentExecutor(f.executor).build();
    IdempotencyKey key = IdempotencyKey.generate();
    OperationCall call = client.operation("cancel-order").key(key).policy(RetryPolicy.builder().maxAttempts(1).build());
    URI uri = URI.create("http://127.0.0.1:9/orders/42/cancel");
    HttpRequest request = method.equals("GET") ? HttpRequest.newBuilder(uri).GET().build()
        : Fixture.post(uri, "{\"qty\":1}");
    OperationException thrown = f.failure(mode, call, request);
    assertEquals(method.equals("GET") ? 0 : 9, scripted.bytesTaken.get(), "the client took the whole body");
    OperationRecord r = f.record(thrown.operationId());
    assertEquals(1, r.attempts().size(), r.attempts().toString());
    assertEquals(expected, r.state(), method + " then " + name + ": " + r);
    assertEquals(expected == OperationState.FAILED ? Classification.SAFE : Classification.AMBIGUOUS,
        r.attempts().get(0).classification(), r.toString());
    assertEquals(key, r.id().key());
  }

  static Stream<Arguments> modesAndNotSentTypes() {
    SSLHandshakeException refused = new SSLHandshakeException("Received fatal alert: certificate_required");
    List<Arguments> cases = List.of(
        Arguments.of("POST", "ConnectException", new ConnectException("Connection refused"), OperationState.UNCERTAIN),
        Arguments.of("POST", "HttpConnectTimeoutException", new HttpConnectTimeoutException("HTTP connect timed out"),
            OperationState.UNCERTAIN),
        Arguments.of("POST", "UnknownHostException", new UnknownHostException("orders.example"),
            OperationState.UNCERTAIN),
        Arguments.of("POST", "NoRouteToHostException", new NoRouteToHostException("No route to host"),
            OperationState.UNCERTAIN),
        Arguments.of("POST", "SocketTimeoutException (connect)", new SocketTimeoutException("connect timed out"),
            OperationState.UNCERTAIN),
        Arguments.of("POST", "SSLHandshakeException", refused, OperationState.UNCERTAIN),
        Arguments.of("POST", "IOException caused by SSLHandshakeException", new IOException(refused.getMessage(),
            refused), OperationState.UNCERTAIN),
        Arguments.of("GET", "SSLHandshakeException", refused, OperationState.UNCERTAIN),
        Arguments.of("GET", "UnknownHostException", new UnknownHostException("orders.example"),
            OperationState.UNCERTAIN));
    return Stream.of(Mode.values()).flatMap(mode -> cases.stream()
        .map(a -> Arguments.of(mode, a.get()[0], a.get()[1], a.get()[2], a.get()[3])));
  }
}
