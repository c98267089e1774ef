package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.RetryPolicy;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An attempt that outlives the retry policy's attemptTimeout is abandoned and the operation is
 * retried with the same key. The abandoned exchange must be stopped: on the sync path the timer's
 * interrupt makes java.net.http cancel it (the connection is closed); on sendAsync nothing cancels
 * the JDK's future, so the abandoned request keeps its connection open for as long as the server
 * likes (forever, with no request timeout).
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class AsyncAttemptTimeoutLeakTest {

  /** Connection 0 reads the request and never answers; later ones answer 201 at once. */
  static final class HangingFirstServer implements AutoCloseable {
    final ServerSocket socket;
    final AtomicInteger connections = new AtomicInteger();
    final CountDownLatch firstClosedByClient = new CountDownLatch(1);

    HangingFirstServer() throws IOException {
      socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread t = new Thread(this::accept, "hanging-first-server");
      t.setDaemon(true);
      t.start();
    }

    URI url() {
      return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/orders");
    }

    private void accept() {
      while (!socket.isClosed()) {
        try {
          Socket s = socket.accept();
          int n = connections.getAndIncrement();
          Thread t = new Thread(() -> serve(s, n));
          t.setDaemon(true);
          t.start();
        } catch (IOException e) {
          return;
        }
      }
    }

    private void serve(Socket s, int n) {
      try (s) {
        InputStream in = new BufferedInputStream(s.getInputStream());
        if (!RawRequest.read(in)) {
          return;
        }
        if (n == 0) {
          // Never answer; tell when the client gives the connection up.
          if (in.read() < 0) {
            firstClosedByClient.countDown();
          }
          return;
        }
        OutputStream out = s.getOutputStream();
        out.write(("HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            .getBytes(StandardCharsets.US_ASCII));
        out.flush();
      } catch (IOException e) {
        if (n == 0) {
          firstClosedByClient.countDown();
        }
      }
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void theTimedOutAttemptsExchangeIsCancelled(Mode mode) throws Exception {
    try (HangingFirstServer server = new HangingFirstServer()) {
      IdempotentHttpClient client = IdempotentHttpClient.builder(Fixture.JDK)
          .idempotentExecutor(IdempotentExecutor.builder().journal(new InMemoryJournal())
              .retryPolicy(RetryPolicy.builder().maxAttempts(3).baseDelay(Duration.ofMillis(10))
                  .attemptTimeout(Duration.ofMillis(500)).build())
              .build())
          .build();
      HttpRequest request = HttpRequest.newBuilder(server.url()) // no request timeout
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A-1\"}")).build();
      OperationCall call = client.operation("create-order");
      HttpResponse<String> r = mode == Mode.SYNC
          ? call.send(request, BodyHandlers.ofString())
          : call.sendAsync(request, BodyHandlers.ofString()).get(10, TimeUnit.SECONDS);
      assertEquals(201, r.statusCode());
      assertEquals(2, server.connections.get());
      assertTrue(server.firstClosedByClient.await(5, TimeUnit.SECONDS),
          mode + ": the exchange of the timed-out attempt is still open 5 s after the operation settled");
    }
  }
}
