package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A journaled request that OkHttp cannot build (here a GET with a body, which the java.net.http
 * adapter or the core API journal, and OkHttp's {@code Request.Builder.method} refuses) fails every
 * attempt of the resume transport before any byte could be sent. Such an attempt is a request not
 * sent: it must not count as "may have been sent", so the operation stays PENDING (with its key),
 * never UNCERTAIN.
 */
class ResumeBuildFailureNotSentTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;
  IdemOkHttp idem;
  IdempotentExecutor executor;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
    idem = f.idem();
    executor = idem.executor();
  }

  private OperationId journalGetWithBody() throws Exception {
    RequestSnapshot snapshot = RequestSnapshot.builder("GET", server.url("/search"))
        .body("{\"q\":1}".getBytes(StandardCharsets.UTF_8), "application/json").build();
    return executor.enqueue(Operation.builder("search", snapshot).build()).id();
  }

  @Test
  void aRequestOkHttpCannotBuildIsNotSentAndStaysPendingNotUncertain() throws Exception {
    OperationId id = journalGetWithBody();
    Transport transport = idem.transport(Fixture.client(idem));

    OperationException e = assertThrows(OperationException.class, () -> executor.resume(id, transport));
    // Never sent: it stays PENDING with its key (the executor's answer to a target it cannot reach),
    // not UNCERTAIN as if an attempt might have acted.
    assertInstanceOf(OperationPendingException.class, e, e.toString());
    assertNotSentEveryAttempt(id);
  }

  @Test
  void anAsyncAttemptOkHttpCannotBuildFailsAsNotSent() throws Exception {
    OperationId id = journalGetWithBody();
    AsyncTransport transport = idem.asyncTransport(Fixture.client(idem));
    OperationRecord record = f.journal.find(id).orElseThrow();

    CompletableFuture<?> sent = transport.sendAsync(record.request(), record.id().key());
    ExecutionException e = assertThrows(ExecutionException.class, () -> sent.get(10, TimeUnit.SECONDS));
    assertInstanceOf(RequestNotSentException.class, e.getCause(), String.valueOf(e.getCause()));
    assertEquals(0, server.requestCount(), "nothing reached the server");
  }

  private void assertNotSentEveryAttempt(OperationId id) throws Exception {
    assertEquals(0, server.requestCount(), "nothing reached the server");
    OperationRecord record = f.journal.find(id).orElseThrow();
    assertEquals(OperationState.PENDING, record.state(), record.attempts().toString());
    assertTrue(record.attempts().size() > 1, "retried: " + record.attempts());
    for (AttemptRecord a : record.attempts()) {
      assertEquals(Classification.SAFE, a.classification(), a.toString());
    }
  }
}
