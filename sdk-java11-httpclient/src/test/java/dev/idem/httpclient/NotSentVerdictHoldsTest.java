package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.RetryPolicy;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The java.net.http counterpart of the OkHttp race fixed in 072479d2: "not sent" (SAFE, so that
 * with maxAttempts(1) the operation ends FAILED) was decided by a look at whether the client had
 * pulled a byte of the body yet, taken when the client reported its failure. Nothing stopped the
 * client from pulling the body after that look: the JDK's HTTP/2 stream completes the response
 * future of a cancelled or timed-out exchange before it stops the body's DATA frames, and an app's
 * HttpClient decorator that gives up waiting (its own bound on {@code send}) may leave the exchange
 * under it running. The journal then said "never sent, FAILED" while the server got the whole
 * request and applied it. The verdict must be atomic with the body: once an attempt is recorded
 * as not sent, its body is refused to whoever asks for it later, so the request cannot go out
 * whole (its declared Content-Length is never met).
 */
class NotSentVerdictHoldsTest {
  private static final URI URL = URI.create("http://127.0.0.1:9/orders"); // never contacted
  private static final String BODY = "{\"qty\":1}";

  @ParameterizedTest
  @EnumSource(Mode.class)
  void aBodyPulledAfterTheNotSentVerdictIsRefused(Mode mode) throws Exception {
    Fixture f = new Fixture();
    // The client reports its failure before it took any byte of the body, and takes it later.
    ScriptedClient scripted = new ScriptedClient(new HttpTimeoutException("the app's client gave up waiting"), false);
    IdempotentHttpClient client = IdempotentHttpClient.builder(scripted).idempotentExecutor(f.executor).build();
    OperationCall call = client.operation("create-order").key(IdempotencyKey.generate())
        .policy(RetryPolicy.builder().maxAttempts(1).build());

    OperationException thrown = send(mode, f, call);
    OperationRecord record = f.record(thrown.operationId());
    assertEquals(1, scripted.exchanges.get());
    assertEquals(1, record.attempts().size());
    AttemptRecord attempt = record.attempts().get(0);
    assertEquals(Classification.SAFE, attempt.classification(), attempt.toString());
    assertEquals(OperationState.FAILED, record.state());

    // The exchange under the failed send goes on and asks for the body now.
    Throwable refused = scripted.takeBodyLate(scripted.requests.get(0));
    assertEquals(0, scripted.bytesTaken.get(),
        "the journal says FAILED, never sent, so no byte of the body may go out after that verdict");
    assertNotNull(refused, "the late subscriber is told the body is refused, so its exchange fails");
    assertTrue(refused instanceof IOException, refused.toString());
  }

  /**
   * The sound side, pinned: the executor's attempt timeout cancels an asynchronous attempt whose
   * body the client has not taken yet. The cancel does not make it "not sent" by a look at the
   * body (the client may take it as the cancel lands): the attempt is recorded as ambiguous, and
   * with maxAttempts(1) the operation ends UNCERTAIN, never FAILED.
   */
  @Test
  void anAttemptTimeoutBeforeTheBodyIsTakenIsAmbiguous() throws Exception {
    Fixture f = new Fixture();
    ScriptedClient silent = ScriptedClient.silent();
    IdempotentHttpClient client = IdempotentHttpClient.builder(silent).idempotentExecutor(f.executor).build();
    OperationCall call = client.operation("create-order").key(IdempotencyKey.generate())
        .policy(RetryPolicy.builder().maxAttempts(1).attemptTimeout(Duration.ofSeconds(1)).build());

    OperationException thrown = send(Mode.ASYNC, f, call); // f.await fires the timeout in virtual time
    assertTrue(thrown instanceof OperationUncertainException, thrown.toString());
    OperationRecord record = f.record(thrown.operationId());
    assertEquals(OperationState.UNCERTAIN, record.state());
    assertEquals(1, silent.exchanges.get());
    assertEquals(1, record.attempts().size());
    assertEquals(Classification.AMBIGUOUS, record.attempts().get(0).classification(),
        record.attempts().get(0).toString());

    // The cancel reached the client's exchange, whose failure then refused the untaken body: the
    // abandoned request cannot go out later either (the record stays ambiguous, which allows for
    // both).
    assertTrue(silent.takeBodyLate(silent.requests.get(0)) instanceof IOException);
    assertEquals(0, silent.bytesTaken.get());
  }

  private static OperationException send(Mode mode, Fixture f, OperationCall call) throws Exception {
    HttpRequest request = Fixture.post(URL, BODY);
    if (mode == Mode.SYNC) {
      return assertThrows(OperationException.class, () -> call.send(request, BodyHandlers.ofString()));
    }
    Exception thrown = assertThrows(Exception.class, () -> f.await(call.sendAsync(request, BodyHandlers.ofString())));
    if (thrown instanceof ExecutionException e && e.getCause() instanceof Exception c) {
      thrown = c;
    }
    assertTrue(thrown instanceof OperationException, thrown.toString());
    return (OperationException) thrown;
  }
}
