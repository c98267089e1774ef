package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.NewOperation;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A keyed {@code sendAsync} reads its body and begins its operation off the caller's thread, on
 * the app's client's executor if it has one (as the JDK client publishes bodies there), so that
 * {@code sendAsync} returns at once however slow the body stream or the journal is.
 */
class AsyncBodyOffCallerThreadTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  private static final byte[] JSON = "{\"sku\":\"A-1\"}".getBytes(StandardCharsets.UTF_8);

  /** A request whose body stream is opened by {@code streams}. */
  private static HttpRequest streaming(URI url, Supplier<InputStream> streams) {
    return HttpRequest.newBuilder(url)
        .header("Content-Type", "application/json")
        .timeout(Duration.ofSeconds(5))
        .POST(HttpRequest.BodyPublishers.ofInputStream(streams))
        .build();
  }

  /** Records the thread of the first begin. */
  private static final class BeginThread extends ForwardingJournal {
    final AtomicReference<Thread> thread = new AtomicReference<>();

    BeginThread() {
      super(new InMemoryJournal());
    }

    @Override
    public BeginResult begin(NewOperation operation) throws IdempotencyException {
      thread.compareAndSet(null, Thread.currentThread());
      return super.begin(operation);
    }
  }

  @Test
  void sendAsyncReturnsBeforeAStreamThatIsNotReadyYetIsRead() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    CountDownLatch ready = new CountDownLatch(1);
    OperationCall call = f.client.operation("create-order");
    CompletableFuture<IdempotentHttpResponse<String>> future =
        call.sendAsync(streaming(server.url("/orders"), () -> new InputStream() {
          final ByteArrayInputStream in = new ByteArrayInputStream(JSON);

          @Override
          public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
          }

          @Override
          public int read(byte[] b, int off, int len) {
            try {
              // The upload has not arrived yet. Bounded, so that a sendAsync that reads on the
              // caller's thread fails the assertions below rather than hang.
              ready.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return -1;
            }
            return in.read(b, off, len);
          }
        }), BodyHandlers.ofString());

    // sendAsync returned while the stream is still blocked: nothing journaled or sent yet.
    assertFalse(future.isDone());
    assertTrue(f.executor.find(call.operationId()).isEmpty(), "journaled before its body was read");
    ready.countDown();

    assertEquals(201, f.await(future).statusCode());
    assertEquals(1, server.effectCount(call.key().value()));
    Fixture.assertKeyOnEveryRequest(server, call.key(), 1);
  }

  @Test
  void theBodyIsReadAndTheOperationBegunOnTheAppClientsExecutor() throws Exception {
    IdempotentServer server = serverExtension.server();
    ExecutorService pool = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "app-client-pool");
      t.setDaemon(true);
      return t;
    });
    try {
      HttpClient app = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(pool).build();
      BeginThread journal = new BeginThread();
      Fixture f = new Fixture(b -> b.journal(journal), c -> { });
      IdempotentHttpClient client = IdempotentHttpClient.builder(app).idempotentExecutor(f.executor).build();
      AtomicReference<Thread> reader = new AtomicReference<>();
      OperationCall call = client.operation("create-order");
      CompletableFuture<IdempotentHttpResponse<String>> future =
          call.sendAsync(streaming(server.url("/orders"), () -> {
            reader.set(Thread.currentThread());
            return new ByteArrayInputStream(JSON);
          }), BodyHandlers.ofString());

      assertEquals(201, f.await(future).statusCode());
      assertEquals(1, server.effectCount(call.key().value()));
      assertNotNull(reader.get());
      assertEquals("app-client-pool", reader.get().getName(), "the body is read on the app client's executor");
      assertEquals("app-client-pool", journal.thread.get().getName(), "the operation is begun there too");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aCallCancelledBeforeItsTurnOnTheExecutorReadsNothing() throws Exception {
    IdempotentServer server = serverExtension.server();
    Queue<Runnable> queued = new ArrayDeque<>();
    HttpClient app = HttpClient.newBuilder().executor(queued::add).build();
    Fixture f = new Fixture();
    IdempotentHttpClient client = IdempotentHttpClient.builder(app).idempotentExecutor(f.executor).build();
    AtomicBoolean opened = new AtomicBoolean();
    OperationCall call = client.operation("create-order");
    CompletableFuture<IdempotentHttpResponse<String>> future =
        call.sendAsync(streaming(server.url("/orders"), () -> {
          opened.set(true);
          return new ByteArrayInputStream(JSON);
        }), BodyHandlers.ofString());
    assertEquals(1, queued.size(), "handed to the app client's executor, not run on the caller's thread");
    assertTrue(future.cancel(true));

    Runnable task;
    while ((task = queued.poll()) != null) {
      task.run();
    }
    assertFalse(opened.get(), "the body of a cancelled call was read");
    assertTrue(f.executor.find(call.operationId()).isEmpty(), "nothing journaled");
    assertEquals(0, server.requestCount(), "nothing sent");
  }
}
