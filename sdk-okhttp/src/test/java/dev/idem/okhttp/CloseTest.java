package dev.idem.okhttp;

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
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 24: {@link IdemOkHttp} is AutoCloseable and closes exactly what it made: the executor of
 * {@link IdemOkHttp#create}, never the app's journal, executor or clients.
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
  void createdAdapterClosesTheExecutorItMadeAndNotTheJournal() throws Exception {
    IdempotentServer server = serverExtension.server();
    CountingJournal journal = new CountingJournal();
    OkHttpClient client;
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (IdemOkHttp idem = IdemOkHttp.create(journal)) {
      client = idem.install(new OkHttpClient.Builder()).build();
      client.newCall(Fixture.order(server.url("/orders"), op)).execute().close();
      assertFalse(idem.executor().isClosed());
    }
    assertEquals(0, journal.closes.get(), "the journal is the app's");

    // A call through the closed adapter is refused before anything is journaled or sent.
    IdempotentOperation later = IdempotentOperation.of("create-order");
    Exception e = assertThrows(Exception.class,
        () -> client.newCall(Fixture.order(server.url("/orders"), later)).execute().close());
    assertTrue(causes(e, "close()"), String.valueOf(e));
    assertEquals(1, server.recordedRequests().size());
    assertFalse(journal.find(later.id()).isPresent());
    assertEquals(1, server.effectCount(op.key().value()));
  }

  @Test
  void anAdapterOverTheAppsExecutorClosesNothing() throws Exception {
    CountingJournal journal = new CountingJournal();
    try (IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build()) {
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      idem.close();
      idem.close();
      assertFalse(executor.isClosed(), "the executor given to the builder is the app's");
    }
    assertEquals(0, journal.closes.get());
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
