package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.tls.KeyedHttp2Server;
import java.io.IOException;
import java.util.List;
import mockwebserver3.SocketEffect;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The adapter over HTTP/2 as production reaches it: TLS, the protocol negotiated by ALPN, and
 * OkHttp's own retry of failed connections left on (its default). Http2HeadersBeforeBodyTest pins
 * the head-first rule on the wire over cleartext HTTP/2; here each case asserts, end to end, what
 * the server did per key, on which protocol, and what the journal keeps.
 */
class Http2OverTlsTest {
  final Fixture f = new Fixture();
  KeyedHttp2Server server;

  @BeforeEach
  void start() throws IOException {
    server = KeyedHttp2Server.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void anAnswerLostWithItsConnectionIsAskedForAgainUnderTheSameKeyAndTakesEffectOnce() throws Exception {
    server.cutFirstAnswer(new SocketEffect.CloseSocket());
    IdempotentOperation op = IdempotentOperation.of("create-order");

    try (Response r = client(f.executorBuilder().build()).newCall(order(op)).execute()) {
      assertEquals(201, r.code());
      assertEquals(Protocol.HTTP_2, r.protocol(), "the answer came over HTTP/2");
      assertEquals("{\"effect\":1}", r.body().string(), "the first effect's answer, replayed");
    }
    assertEquals(1, server.effects(), "one effect in all");
    assertEquals(List.of("HTTP/2 " + op.key().value(), "HTTP/2 " + op.key().value()), server.seen(),
        "both attempts over HTTP/2, with the same key");
    OperationRecord rec = f.record(op);
    assertEquals(OperationState.SUCCEEDED, rec.state(), rec.toString());
    assertEquals(2, rec.attempts().size(), rec.attempts().toString());
    assertTrue(rec.attempts().get(0).mayHaveTakenEffect(), "the lost answer's attempt: " + rec.attempts().get(0));
  }

  @Test
  void anAnswerLostWithItsConnectionAndNoAttemptLeftIsUncertainNotFailed() throws Exception {
    assertAnswerCutUncertain(new SocketEffect.CloseSocket());
  }

  @Test
  void aStreamResetAfterTheServerActedIsUncertainNotFailed() throws Exception {
    assertAnswerCutUncertain(new SocketEffect.CloseStream(2));  // RST_STREAM, INTERNAL_ERROR
  }

  @Test
  void aConnectionLostAsTheKeyedHeadersArriveIsUncertainNotFailed() throws Exception {
    // The server had the keyed HEADERS and never read the body: it did not act, but it could have.
    server.cutFirstHeaders(new SocketEffect.CloseSocket());
    OperationRecord rec = sendOnce();
    assertEquals(0, server.effects(), "the server never read the body, so never acted");
    assertUncertain(rec);
  }

  /** The server acts, then {@code cut} takes its answer; one attempt allowed: UNCERTAIN. */
  private void assertAnswerCutUncertain(SocketEffect cut) throws Exception {
    server.cutFirstAnswer(cut);
    OperationRecord rec = sendOnce();
    assertEquals(1, server.effects(), "the server acted once");
    assertUncertain(rec);
  }

  /** One attempt allowed: sends a keyed order that must fail, and returns its journal record. */
  private OperationRecord sendOnce() throws Exception {
    IdempotentOperation op = IdempotentOperation.of("create-order");
    OkHttpClient client = client(f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build());
    assertThrows(IOException.class, () -> client.newCall(order(op)).execute().close());
    return f.record(op);
  }

  private static void assertUncertain(OperationRecord rec) {
    assertEquals(OperationState.UNCERTAIN, rec.state(), rec.toString());
    assertEquals(1, rec.attempts().size(), rec.attempts().toString());
    assertEquals(Classification.AMBIGUOUS, rec.attempts().get(0).classification(), rec.attempts().toString());
  }

  /** OkHttp's defaults (its own connection retry on), trusting the test server, with Idem's interceptor. */
  private static OkHttpClient client(IdempotentExecutor executor) {
    return new OkHttpClient.Builder()
        .addInterceptor(IdemOkHttp.builder(executor).build().interceptor())
        .sslSocketFactory(KeyedHttp2Server.socketFactory(), KeyedHttp2Server.trustManager())
        .build();
  }

  private Request order(IdempotentOperation op) {
    return Fixture.order(server.url("/orders").uri(), op);
  }
}
