package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.testkit.StreamingBodyServer;
import dev.idem.testkit.StreamingBodyServer.Reply;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 24, "The read timeout bounds the whole response", for java.net.http: the request's
 * {@code timeout} ends at the headers, so a 200 whose small declared body trickles in (here 40
 * bytes, one every 100 ms: 4 s in all) held every keyed call until its last byte, even with a
 * body handler that returns at the headers; and with an {@code attemptTimeout} shorter than the
 * trickle, the answered attempt was taken for one without a response, sent again, and ended
 * UNCERTAIN although its 200 had arrived. Now Idem reads the body for the journal for one request
 * timeout in all, and before the attempt timeout, and the rest goes on to the caller's handler.
 *
 * <p>Real time against a real socket (the trickle is the server's), about a second per test; the
 * bounds asserted are far from the 4 s the trickle takes.
 */
class TricklingBodyTest {
  private static final int LENGTH = 40;
  private static final long MUCH_LESS_THAN_THE_TRICKLE_MS = 2_500;

  private final InMemoryJournal journal = new InMemoryJournal();
  private StreamingBodyServer server;

  @BeforeEach
  void start() throws Exception {
    server = StreamingBodyServer.start(n -> Reply.of(200, LENGTH, true).trickled(Duration.ofMillis(100)));
  }

  @AfterEach
  void stop() {
    server.close();
  }

  /** On real time: the attempt timeout's timer must really fire while the body trickles. */
  private IdempotentHttpClient client(RetryPolicy policy) {
    return IdempotentHttpClient.builder(Fixture.JDK)
        .idempotentExecutor(IdempotentExecutor.builder().journal(journal).retryPolicy(policy).build()).build();
  }

  private HttpRequest post(Duration timeout) {
    return HttpRequest.newBuilder(server.url()).timeout(timeout).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"qty\":1}")).build();
  }

  @Test
  void theRequestTimeoutBoundsTheWholeCapturedBody() throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    long started = System.nanoTime();
    HttpResponse<InputStream> r = client(RetryPolicy.ofDefaults()).operation("create-order").key(key)
        .send(post(Duration.ofMillis(400)), BodyHandlers.ofInputStream());
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    try (InputStream body = r.body()) {
      assertEquals(200, r.statusCode());
      assertTrue(tookMs < MUCH_LESS_THAN_THE_TRICKLE_MS, "send took " + tookMs + " ms");
      // The handler gets what arrived, then the rest as it comes.
      assertEquals(StreamingBodyServer.expectedByte(0), (byte) body.read());
    }
    assertAnsweredOnce(key);
  }

  @Test
  void anAttemptTimeoutWhileTheBodyTricklesDoesNotMakeTheAttemptUnanswered() throws Exception {
    IdemCall call = (client, key) -> client.operation("create-order").key(key)
        .send(post(Duration.ofSeconds(10)), BodyHandlers.ofInputStream());
    runWithAttemptTimeout(call);
  }

  @Test
  void theSameOnSendAsync() throws Exception {
    IdemCall call = (client, key) -> client.operation("create-order").key(key)
        .sendAsync(post(Duration.ofSeconds(10)), BodyHandlers.ofInputStream()).get(10, TimeUnit.SECONDS);
    runWithAttemptTimeout(call);
  }

  @Test
  void theResumeTransportReadsTheCapturedBodyForOneTimeoutInAll() throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    RequestSnapshot journaled = RequestSnapshot.builder("POST", server.url())
        .body("{\"qty\":1}".getBytes(StandardCharsets.UTF_8), "application/json").build();
    long started = System.nanoTime();
    ResponseSnapshot answer = client(RetryPolicy.ofDefaults()).resumeTransport(s -> Map.of(), Duration.ofMillis(400))
        .send(journaled, key);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    assertEquals(200, answer.status());
    assertTrue(tookMs < MUCH_LESS_THAN_THE_TRICKLE_MS, "send took " + tookMs + " ms");
    assertEquals(Optional.of(Integer.toString(LENGTH)), answer.header(ResponseSnapshot.BODY_NOT_KEPT_HEADER));
    assertEquals(List.of(Optional.of(key.value())), server.keys());
  }

  @FunctionalInterface
  private interface IdemCall {
    HttpResponse<InputStream> send(IdempotentHttpClient client, IdempotencyKey key) throws Exception;
  }

  private void runWithAttemptTimeout(IdemCall call) throws Exception {
    IdempotentHttpClient client = client(RetryPolicy.builder().attemptTimeout(Duration.ofMillis(700)).build());
    IdempotencyKey key = IdempotencyKey.generate();
    long started = System.nanoTime();
    HttpResponse<InputStream> r = call.send(client, key);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    r.body().close();
    assertEquals(200, r.statusCode());
    assertTrue(tookMs < MUCH_LESS_THAN_THE_TRICKLE_MS, "the call took " + tookMs + " ms");
    assertAnsweredOnce(key);
  }

  /** SUCCEEDED on its first attempt, one request with the key, the body not kept. */
  private void assertAnsweredOnce(IdempotencyKey key) throws Exception {
    OperationRecord rec = journal.find(new OperationId(OperationId.DEFAULT_SCOPE, "create-order", key))
        .orElseThrow(() -> new AssertionError("not journaled: " + key));
    assertEquals(OperationState.SUCCEEDED, rec.state(), rec.attempts().toString());
    assertEquals(1, rec.attempts().size(), "the 200 arrived: never sent again");
    assertEquals(Optional.of(Integer.toString(LENGTH)), rec.response().header(ResponseSnapshot.BODY_NOT_KEPT_HEADER),
        "the body that did not arrive in time is not kept");
    assertEquals(List.of(Optional.of(key.value())), server.keys(), "one request, with the key");
  }
}
