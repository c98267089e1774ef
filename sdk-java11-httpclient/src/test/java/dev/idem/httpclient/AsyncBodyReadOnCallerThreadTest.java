package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code sendAsync} promises to send "without blocking a thread". With a streaming body publisher
 * ({@code BodyPublishers.ofInputStream}, the way an app forwards an upload or a pipe), Idem
 * captures the body for the journal by subscribing to the publisher on the caller's thread, and
 * the JDK's InputStream publisher reads the whole stream inside that subscribe: the caller's thread
 * (an event loop, a request thread) blocks until the stream ends, however slow it is. The JDK
 * client's own {@code sendAsync} reads it on the client's executor, never on the caller's thread.
 */
class AsyncBodyReadOnCallerThreadTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  /** A request whose body is read from a stream that records the thread that reads it. */
  private static HttpRequest streaming(URI url, AtomicReference<Thread> reader) {
    byte[] json = "{\"sku\":\"A-1\"}".getBytes(StandardCharsets.UTF_8);
    return HttpRequest.newBuilder(url)
        .header("Content-Type", "application/json")
        .timeout(Duration.ofSeconds(5))
        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new InputStream() {
          final ByteArrayInputStream in = new ByteArrayInputStream(json);

          @Override
          public int read() {
            reader.compareAndSet(null, Thread.currentThread());
            return in.read();
          }

          @Override
          public int read(byte[] b, int off, int len) {
            reader.compareAndSet(null, Thread.currentThread());
            return in.read(b, off, len);
          }
        }))
        .build();
  }

  @Test
  void theJdkClientsOwnSendAsyncDoesNotReadTheStreamOnTheCallersThread() throws Exception {
    IdempotentServer server = serverExtension.server();
    AtomicReference<Thread> reader = new AtomicReference<>();
    CompletableFuture<?> f = Fixture.JDK.sendAsync(streaming(server.url("/orders"), reader), BodyHandlers.ofString());
    f.get(10, TimeUnit.SECONDS);
    assertNotNull(reader.get());
    assertNotSame(Thread.currentThread(), reader.get(), "the baseline: the JDK reads the body on its executor");
  }

  @Test
  void keyedSendAsyncDoesNotReadTheStreamOnTheCallersThread() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    AtomicReference<Thread> reader = new AtomicReference<>();
    OperationCall call = f.client.operation("create-order");
    CompletableFuture<IdempotentHttpResponse<String>> future =
        call.sendAsync(streaming(server.url("/orders"), reader), BodyHandlers.ofString());
    Thread caller = Thread.currentThread();
    assertEquals(201, f.await(future).statusCode());
    assertEquals(1, server.effectCount(call.key().value()));
    assertNotSame(caller, reader.get(), "sendAsync read the whole request body stream on the caller's thread ("
        + caller.getName() + "), blocking it until the stream ended");
  }
}
