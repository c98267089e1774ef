package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 24: {@link IdempotentHttpClient} is AutoCloseable and closes exactly what it made: the
 * executor it built, never the app's journal, executor or {@code HttpClient}.
 */
class CloseTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  /** Counts close() calls, which must stay at zero: the journal is the app's. */
  private static final class CountingJournal extends ForwardingJournal {
    final AtomicInteger closes = new AtomicInteger();

    CountingJournal() {
      super(new InMemoryJournal());
    }

    @Override
    public void close() throws IdempotencyException {
      closes.incrementAndGet();
      super.close();
    }
  }

  @Test
  void createdClientClosesTheExecutorItMadeAndNotTheJournal() throws Exception {
    IdempotentServer server = serverExtension.server();
    CountingJournal journal = new CountingJournal();
    IdempotentHttpClient client = IdempotentHttpClient.create(Fixture.JDK, journal);
    try (client) {
      OperationCall call = client.operation("create-order");
      assertEquals(201, call.send(Fixture.post(server.url("/orders"), "{}"), BodyHandlers.ofString()).statusCode());
    }
    assertTrue(client.idempotentExecutor().isClosed());
    assertEquals(0, journal.closes.get(), "the journal is the app's");

    // A keyed call through the closed client is refused before anything is journaled or sent.
    OperationCall later = client.operation("create-order");
    Exception e = assertThrows(Exception.class,
        () -> later.send(Fixture.post(server.url("/orders"), "{}"), BodyHandlers.ofString()));
    assertTrue(causes(e, "close()"), String.valueOf(e));
    assertEquals(1, server.recordedRequests().size());
    assertFalse(journal.find(later.operationId()).isPresent());
  }

  @Test
  void aClientOverTheAppsExecutorClosesNothingAndADefaultExecutorIsClosed() throws Exception {
    CountingJournal journal = new CountingJournal();
    try (IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build()) {
      IdempotentHttpClient client = IdempotentHttpClient.builder(Fixture.JDK).idempotentExecutor(executor).build();
      client.close();
      client.close();
      assertFalse(executor.isClosed(), "the executor given to the builder is the app's");
    }
    assertEquals(0, journal.closes.get());

    IdempotentHttpClient withDefault = IdempotentHttpClient.builder(Fixture.JDK).build();
    withDefault.close();
    assertTrue(withDefault.idempotentExecutor().isClosed(), "the executor made by the builder is closed");
  }

  private static boolean causes(Throwable t, String text) {
    for (int i = 0; t != null && i < 10; t = t.getCause(), i++) {
      if (t instanceof IllegalStateException && String.valueOf(t.getMessage()).contains(text)) {
        return true;
      }
    }
    return false;
  }
}
