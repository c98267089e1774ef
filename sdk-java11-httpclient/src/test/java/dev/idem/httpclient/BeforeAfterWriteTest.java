package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 15, "Causes are reported truthfully", for java.net.http: a transport failure (a
 * RuntimeException or an IOException) is classified by where it happened. Before the client took
 * any byte of the request body, the server cannot have processed the request: every attempt is
 * SAFE and the operation ends FAILED. After the client took the body, the request may have been
 * processed: the attempts are AMBIGUOUS and the operation ends UNCERTAIN. Before this, a failure
 * without a connect exception was always taken as sent, so the first case ended UNCERTAIN.
 */
class BeforeAfterWriteTest {
  private static final URI URL = URI.create("http://127.0.0.1:9/orders"); // never contacted

  @ParameterizedTest
  @EnumSource(Mode.class)
  void runtimeExceptionBeforeTheBodyIsTakenIsSafe(Mode mode) throws Exception {
    Outcome o = run(mode, new IllegalStateException("proxy selector failed"), false);
    assertEquals(OperationState.FAILED, o.record.state());
    assertTrue(o.thrown instanceof OperationFailedException, o.thrown.toString());
    assertAll(o, Classification.SAFE, "java.lang.IllegalStateException");
    assertEquals(0, o.client.bytesTaken.get());
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void ioExceptionBeforeTheBodyIsTakenIsSafe(Mode mode) throws Exception {
    Outcome o = run(mode, new IOException("no connection"), false);
    assertEquals(OperationState.FAILED, o.record.state());
    assertAll(o, Classification.SAFE, "java.io.IOException");
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void runtimeExceptionAfterTheBodyWasTakenIsAmbiguous(Mode mode) throws Exception {
    Outcome o = run(mode, new IllegalStateException("broke after writing"), true);
    assertEquals(OperationState.UNCERTAIN, o.record.state());
    assertTrue(o.thrown instanceof OperationUncertainException, o.thrown.toString());
    assertAll(o, Classification.AMBIGUOUS, "IllegalStateException");
    assertEquals(4L * "{\"qty\":1}".length(), o.client.bytesTaken.get(), "the body went out on every attempt");
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void ioExceptionAfterTheBodyWasTakenIsAmbiguous(Mode mode) throws Exception {
    Outcome o = run(mode, new IOException("connection reset"), true);
    assertEquals(OperationState.UNCERTAIN, o.record.state());
    assertAll(o, Classification.AMBIGUOUS, "IOException");
  }

  private record Outcome(OperationRecord record, Exception thrown, ScriptedClient client) {}

  private static Outcome run(Mode mode, Exception failure, boolean afterBody) throws Exception {
    Fixture f = new Fixture();
    ScriptedClient scripted = new ScriptedClient(failure, afterBody);
    IdempotentHttpClient client = IdempotentHttpClient.builder(scripted).idempotentExecutor(f.executor).build();
    IdempotencyKey key = IdempotencyKey.generate();
    OperationCall call = client.operation("create-order").key(key);
    Exception thrown;
    if (mode == Mode.SYNC) {
      thrown = assertThrows(OperationException.class, () -> call.send(Fixture.post(URL, "{\"qty\":1}"),
          BodyHandlers.ofString()));
    } else {
      thrown = assertThrows(Exception.class, () -> f.await(call.sendAsync(Fixture.post(URL, "{\"qty\":1}"),
          BodyHandlers.ofString())));
      if (thrown instanceof ExecutionException e && e.getCause() instanceof Exception c) {
        thrown = c;
      }
    }
    OperationRecord record = f.record(((OperationException) thrown).operationId());
    assertEquals(4, scripted.exchanges.get(), "every attempt was tried");
    return new Outcome(record, thrown, scripted);
  }

  private static void assertAll(Outcome o, Classification expected, String exceptionNamed) {
    assertEquals(4, o.record.attempts().size());
    for (AttemptRecord a : o.record.attempts()) {
      assertEquals(expected, a.classification(), a.toString());
    }
    StringBuilder text = new StringBuilder(o.record.attempts().toString()).append(' ').append(o.record.reason());
    for (Throwable t = o.thrown; t != null; t = t.getCause()) {
      text.append(" / ").append(t);
    }
    assertTrue(text.toString().contains(exceptionNamed), "the exception is named: " + text);
  }
}
