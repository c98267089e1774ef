package dev.idem.core;

import static dev.idem.core.Classification.AMBIGUOUS;
import static dev.idem.core.Classification.PERMANENT;
import static dev.idem.core.Classification.SAFE;
import static dev.idem.core.Classification.SUCCESS;
import static dev.idem.core.Classification.TRANSIENT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.ScriptedTransport;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Every row of the default table, the should-retry override, and composition. */
class ClassifierTest {
  private static final Classifier DEFAULTS = Classifier.defaults();

  private static Classification of(ResponseSnapshot r) {
    return DEFAULTS.classify(r).orElseThrow().classification();
  }

  private static Classification of(IOException e) {
    return DEFAULTS.classify(e).orElseThrow().classification();
  }

  static Stream<Arguments> failures() {
    return Stream.of(
        // nothing was written: SAFE
        Arguments.of(new ConnectException("Connection refused"), SAFE),
        Arguments.of(new UnknownHostException("api.example.com"), SAFE),
        Arguments.of(new NoRouteToHostException("no route"), SAFE),
        Arguments.of(new SSLHandshakeException("handshake failure"), SAFE),
        Arguments.of(new HttpConnectTimeoutException("connect timed out"), SAFE),
        Arguments.of(new RequestNotSentException("pool exhausted before writing", null), SAFE),
        Arguments.of(new IOException("wrapped", new ConnectException("refused")), SAFE),
        Arguments.of(new IOException("wrapped twice", new IOException(new UnknownHostException("x"))), SAFE),
        Arguments.of(new SocketTimeoutException("Connect timed out"), SAFE), // the JDK's socket connect
        Arguments.of(new SocketTimeoutException("timeout"), AMBIGUOUS), // OkHttp's read/write timeout
        // the request may have been written: AMBIGUOUS
        Arguments.of(new SocketTimeoutException("Read timed out"), AMBIGUOUS),
        Arguments.of(new SocketException("Connection reset"), AMBIGUOUS),
        Arguments.of(new EOFException("unexpected end of stream"), AMBIGUOUS),
        Arguments.of(new IOException("something else"), AMBIGUOUS));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("failures")
  void exceptions(IOException failure, Classification expected) {
    assertEquals(expected, of(failure));
  }

  @ParameterizedTest(name = "HTTP {0} -> SUCCESS")
  @ValueSource(ints = {200, 201, 202, 204, 299})
  void twoHundredsSucceed(int status) {
    assertEquals(SUCCESS, of(ScriptedTransport.response(status)));
  }

  /**
   * A cause chain that loops through two exceptions (initCause refuses only a self-cause) used to
   * hang the classifier, and with it the call; each cause is now looked at once. Found beside the
   * same hole in the webhook processor's classifier, by a review on 2026-12-03.
   */
  @Test
  void aLoopingCauseChainIsClassifiedNotFollowedForever() {
    IOException outer = new IOException("reset");
    IOException inner = new IOException("wrapped", outer);
    outer.initCause(inner);
    Classification c = assertTimeoutPreemptively(java.time.Duration.ofSeconds(5), () -> of(outer));
    assertEquals(AMBIGUOUS, c);
  }

  @Test
  void conflictMeansTheKeyIsStillInFlight() {
    assertEquals(AMBIGUOUS, of(ScriptedTransport.response(409)));
  }

  /** The server says it did not process the request: retried, and giving up after them alone ends FAILED. */
  @ParameterizedTest(name = "HTTP {0} -> TRANSIENT")
  @ValueSource(ints = {408, 425, 429, 503})
  void transientStatuses(int status) {
    assertEquals(TRANSIENT, of(ScriptedTransport.response(status)));
  }

  /**
   * A 5xx that does not say "not processed" may follow the effect (a 500 after the commit, a
   * gateway that lost or gave up waiting for the backend's answer): retried with the key, and
   * giving up ends UNCERTAIN, never FAILED.
   */
  @ParameterizedTest(name = "HTTP {0} -> AMBIGUOUS")
  @ValueSource(ints = {500, 502, 504, 507, 599})
  void serverErrorsThatMayFollowTheEffect(int status) {
    Verdict v = DEFAULTS.classify(ScriptedTransport.response(status)).orElseThrow();
    assertEquals(AMBIGUOUS, v.classification());
    assertTrue(v.reason().contains("may have acted"), v.reason());
  }

  @ParameterizedTest(name = "HTTP {0} -> PERMANENT")
  @ValueSource(ints = {100, 300, 304, 307, 308, 400, 401, 403, 404, 405, 410, 413, 415, 422, 428, 451, 501, 505})
  void permanentStatuses(int status) {
    assertEquals(PERMANENT, of(ScriptedTransport.response(status)));
  }

  /**
   * Issue 24: a redirect to GET elsewhere is how a server may answer a POST it processed
   * (Post/Redirect/Get). The adapters do not follow a keyed request's redirect, so the 3xx is the
   * attempt's answer, and FAILED would hide an effect that may exist.
   */
  @ParameterizedTest(name = "HTTP {0} -> AMBIGUOUS")
  @ValueSource(ints = {301, 302, 303})
  void redirectsToGetElsewhereMayFollowTheEffect(int status) {
    assertEquals(AMBIGUOUS, of(ScriptedTransport.response(status)));
  }

  @Test
  void badRequestMentioningTheKeyIsAConfigurationError() {
    Verdict plain = DEFAULTS.classify(ScriptedTransport.response(400, Map.of(), "{\"error\":\"amount\"}")).orElseThrow();
    Verdict missing = DEFAULTS.classify(ScriptedTransport.response(400, Map.of(),
        "{\"error\":\"Idempotency-Key header is missing\"}")).orElseThrow();
    assertEquals(PERMANENT, plain.classification());
    assertEquals(PERMANENT, missing.classification());
    assertTrue(missing.reason().contains("configuration"), missing.reason());
    assertNotEquals(plain.reason(), missing.reason());
  }

  @Test
  void unprocessableIsKeyReuse() {
    Verdict v = DEFAULTS.classify(ScriptedTransport.response(422)).orElseThrow();
    assertEquals(PERMANENT, v.classification());
    assertTrue(v.reason().contains("422"), v.reason());
  }

  @Test
  void shouldRetryHeaderOverridesBothWays() {
    Classifier c = Classifier.shouldRetryHeader("Stripe-Should-Retry").orElse(DEFAULTS);
    assertEquals(PERMANENT, c.classify(ScriptedTransport.response(503, Map.of("Stripe-Should-Retry", "false"), ""))
        .orElseThrow().classification());
    assertEquals(TRANSIENT, c.classify(ScriptedTransport.response(400, Map.of("stripe-should-retry", " TRUE "), ""))
        .orElseThrow().classification());
    assertEquals(TRANSIENT, c.classify(ScriptedTransport.response(503, Map.of("Stripe-Should-Retry", "true"), ""))
        .orElseThrow().classification());
    // "retry" never turns a status that may follow the effect into one that ends FAILED
    for (int mayHaveActed : new int[] {302, 500, 502, 504, 599}) {
      assertEquals(AMBIGUOUS, c.classify(ScriptedTransport.response(mayHaveActed,
          Map.of("Stripe-Should-Retry", "true"), "")).orElseThrow().classification(), "HTTP " + mayHaveActed);
    }
    // no opinion: garbage value, no header, a success, an exception
    assertEquals(TRANSIENT, c.classify(ScriptedTransport.response(503, Map.of("Stripe-Should-Retry", "maybe"), ""))
        .orElseThrow().classification());
    assertEquals(PERMANENT, c.classify(ScriptedTransport.response(400)).orElseThrow().classification());
    assertEquals(SUCCESS, c.classify(ScriptedTransport.response(200, Map.of("Stripe-Should-Retry", "false"), ""))
        .orElseThrow().classification());
    assertEquals(Optional.empty(), Classifier.shouldRetryHeader("Stripe-Should-Retry")
        .classify(ScriptedTransport.response(200, Map.of("Stripe-Should-Retry", "true"), "")));
    assertEquals(Optional.empty(), Classifier.shouldRetryHeader("Stripe-Should-Retry")
        .classify(new SocketTimeoutException()));
  }

  @Test
  void forStatusAndOrElseCompose() {
    Classifier c = Classifier.forStatus(404, Verdict.transientFailure("replica lag"))
        .orElse(Classifier.forStatus(503, Verdict.permanent("maintenance")))
        .orElse(DEFAULTS);
    assertEquals(TRANSIENT, c.classify(ScriptedTransport.response(404)).orElseThrow().classification());
    assertEquals("replica lag", c.classify(ScriptedTransport.response(404)).orElseThrow().reason());
    assertEquals(PERMANENT, c.classify(ScriptedTransport.response(503)).orElseThrow().classification());
    assertEquals(AMBIGUOUS, c.classify(ScriptedTransport.response(502)).orElseThrow().classification());
    assertEquals(SAFE, c.classify(new ConnectException()).orElseThrow().classification());
    // forStatus abstains on everything else, and on exceptions
    Classifier only = Classifier.forStatus(404, Verdict.transientFailure("x"));
    assertEquals(Optional.empty(), only.classify(ScriptedTransport.response(405)));
    assertEquals(Optional.empty(), only.classify(new ConnectException()));
    // the first opinion wins, even against the defaults
    Classifier first = DEFAULTS.orElse(Classifier.forStatus(404, Verdict.transientFailure("never asked")));
    assertEquals(PERMANENT, first.classify(ScriptedTransport.response(404)).orElseThrow().classification());
  }
}
