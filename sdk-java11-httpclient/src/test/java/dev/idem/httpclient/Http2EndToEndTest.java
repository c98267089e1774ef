package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.RetryPolicy;
import dev.idem.testkit.tls.KeyedHttp2Server;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.List;
import mockwebserver3.SocketEffect;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The decorator over HTTP/2, end to end: the real JDK client negotiates h2 by ALPN with a
 * MockWebServer over TLS. Over HTTP/2 the JDK sends the HEADERS frame, the key in it, before it
 * takes a byte of the body, so an attempt whose answer never came must count as maybe sent
 * (HeadOutBodyNotTakenTest shows that order with a scripted client; here it is the real client on
 * the real protocol). Each case asserts what the server did per key, on which protocol, and what
 * the journal keeps.
 */
class Http2EndToEndTest {
  /** One client for the class: HTTP/2 preferred, trusting only the test server's certificate. */
  private static final HttpClient H2 = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_2)
      .sslContext(KeyedHttp2Server.clientContext())
      .connectTimeout(Duration.ofSeconds(5))
      .build();

  private KeyedHttp2Server keyed;

  @BeforeEach
  void start() throws Exception {
    keyed = KeyedHttp2Server.start();
  }

  @AfterEach
  void stop() {
    keyed.close();
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void anAnswerLostWithItsConnectionIsAskedForAgainUnderTheSameKeyAndTakesEffectOnce(Mode mode) throws Exception {
    keyed.cutFirstAnswer(new SocketEffect.CloseSocket());
    Fixture f = new Fixture(H2, b -> { });
    IdempotencyKey key = IdempotencyKey.generate();

    IdempotentHttpResponse<String> r = mode.send(f, f.client.operation("create-order").key(key),
        post(), BodyHandlers.ofString());

    assertEquals(201, r.statusCode());
    assertEquals(HttpClient.Version.HTTP_2, r.version(), "the answer came over HTTP/2");
    assertEquals("{\"effect\":1}", r.body(), "the first effect's answer, replayed");
    assertEquals(1, keyed.effects(), "one effect in all");
    assertEquals(List.of("HTTP/2 " + key.value(), "HTTP/2 " + key.value()), keyed.seen(),
        "both attempts over HTTP/2, with the same key");
    OperationRecord rec = f.record(r.operationId());
    assertEquals(OperationState.SUCCEEDED, rec.state(), rec.toString());
    assertEquals(2, rec.attempts().size(), rec.attempts().toString());
    assertTrue(rec.attempts().get(0).mayHaveTakenEffect(), "the lost answer's attempt: " + rec.attempts().get(0));
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void anAnswerLostWithItsConnectionAndNoAttemptLeftIsUncertainNotFailed(Mode mode) throws Exception {
    assertAnswerCutUncertain(mode, new SocketEffect.CloseSocket());
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void aStreamResetAfterTheServerActedIsUncertainNotFailed(Mode mode) throws Exception {
    // RST_STREAM with INTERNAL_ERROR (2): the stream ends, the connection stays.
    assertAnswerCutUncertain(mode, new SocketEffect.CloseStream(2));
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void aConnectionLostAsTheKeyedHeadersArriveIsUncertainNotFailed(Mode mode) throws Exception {
    // The server closes the connection as the stream's HEADERS frame (the key in it) arrives,
    // before it reads the body: it never acts, but it had the keyed head, so "not sent" would be
    // a lie. (The body Idem sends is its own copy of the journaled bytes, which the client takes
    // right after the head; the window where only the head is out cannot be held here, see
    // HeadOutBodyNotTakenTest for it with a scripted client.)
    keyed.cutFirstHeaders(new SocketEffect.CloseSocket());
    assertUncertain(sendOnce(mode, IdempotencyKey.generate()));
    assertEquals(0, keyed.effects(), "the server never read the body, so never acted");
    // The server may book the stream it cut (the line, no headers), after the client saw the cut.
    assertTrue(keyed.seen().stream().allMatch(r -> r.equals("HTTP/2 null")),
        "no keyed request reached the dispatcher: " + keyed.seen());
  }

  /** The server acts, then {@code cut} takes its answer; one attempt allowed: UNCERTAIN. */
  private void assertAnswerCutUncertain(Mode mode, SocketEffect cut) throws Exception {
    keyed.cutFirstAnswer(cut);
    IdempotencyKey key = IdempotencyKey.generate();
    assertUncertain(sendOnce(mode, key));
    assertEquals(1, keyed.effects(), "the server acted once");
    assertEquals(List.of("HTTP/2 " + key.value()), keyed.seen(), "one attempt, over HTTP/2, keyed");
  }

  /** Sends a keyed order with one attempt allowed, which must fail; the journal's record of it. */
  private OperationRecord sendOnce(Mode mode, IdempotencyKey key) throws Exception {
    Fixture f = new Fixture(H2, b -> b.retryPolicy(RetryPolicy.builder().maxAttempts(1).build()));
    OperationException thrown = assertThrows(OperationException.class,
        () -> mode.send(f, f.client.operation("create-order").key(key), post(), BodyHandlers.ofString()));
    assertInstanceOf(OperationUncertainException.class, thrown, "the server had the keyed request: " + thrown);
    return f.record(thrown.operationId());
  }

  /** What the journal must say when the server had the keyed request and no answer came: maybe. */
  private static void assertUncertain(OperationRecord rec) {
    assertEquals(OperationState.UNCERTAIN, rec.state(), rec.toString());
    assertEquals(1, rec.attempts().size(), rec.attempts().toString());
    assertEquals(Classification.AMBIGUOUS, rec.attempts().get(0).classification(), rec.attempts().toString());
  }

  private HttpRequest post() {
    return Fixture.post(keyed.url("/orders").uri(), "{\"sku\":\"42\"}");
  }
}
