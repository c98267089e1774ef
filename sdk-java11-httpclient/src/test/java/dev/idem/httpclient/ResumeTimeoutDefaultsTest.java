package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Which timeout bounds a resumed or queued attempt: its request's own (journaled with it), else the
 * transport's, else the retry policy's attemptTimeout, else 30 s; never none. Read from the request
 * the wrapped client is handed (a client that refuses to connect, so nothing waits).
 */
class ResumeTimeoutDefaultsTest {
  private static final URI URL = URI.create("http://127.0.0.1:9/orders");

  @Test
  void theRequestsOwnTimeoutComesFirst() throws Exception {
    assertEquals(Duration.ofMillis(500), timeoutSent(Duration.ofMillis(500), b -> { }, Duration.ofSeconds(2)));
  }

  @Test
  void aRequestWithoutOneGetsTheTransportsTimeout() throws Exception {
    assertEquals(Duration.ofSeconds(2), timeoutSent(null, b -> { }, Duration.ofSeconds(2)));
  }

  @Test
  void withoutEitherThePolicysAttemptTimeout() throws Exception {
    assertEquals(Duration.ofSeconds(5), timeoutSent(null,
        b -> b.retryPolicy(RetryPolicy.builder().attemptTimeout(Duration.ofSeconds(5)).build()), null));
  }

  @Test
  void withNoneAtAllThirtySecondsNeverUnbounded() throws Exception {
    assertEquals(Duration.ofSeconds(30), timeoutSent(null, b -> { }, null)); // the docs/client.md snippet
  }

  @Test
  void anEnqueuedRequestsTimeoutIsJournaledWithIt() throws Exception {
    Fixture f = new Fixture();
    // A secret header and a fragment: the journaled copy is rebuilt without them, its timeout kept.
    HttpRequest request = HttpRequest.newBuilder(URI.create(URL + "#top")).timeout(Duration.ofMillis(750))
        .header("Authorization", "Bearer s3cr3t")
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build();
    var id = f.client.operation("create-order").enqueue(request);
    RequestSnapshot journaled = f.record(id).request();
    assertEquals(Optional.empty(), journaled.header("Authorization"));
    assertEquals(URL, journaled.uri());
    assertEquals(Optional.of(Duration.ofMillis(750)), journaled.timeout());
  }

  private static Duration timeoutSent(Duration requestTimeout,
      Consumer<dev.idem.core.IdempotentExecutor.Builder> executor, Duration transportTimeout) throws Exception {
    Fixture f = new Fixture(executor, c -> { });
    ScriptedClient scripted = new ScriptedClient(new ConnectException("refused"), false);
    IdempotentHttpClient client = IdempotentHttpClient.builder(scripted).idempotentExecutor(f.executor).build();
    RequestSnapshot snapshot = RequestSnapshot.builder("POST", URL).body("{}".getBytes(), "application/json")
        .timeout(requestTimeout).build();
    ResumeTransport transport = client.resumeTransport(r -> Map.of(), transportTimeout);
    assertThrows(RequestNotSentException.class, () -> transport.send(snapshot, IdempotencyKey.generate()));
    assertEquals(1, scripted.requests.size());
    return scripted.requests.get(0).timeout().orElseThrow(() -> new AssertionError("an attempt without a timeout"));
  }
}
