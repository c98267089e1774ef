package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.client.IdempotencyInterceptor;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.MediaType;
import org.springframework.http.RequestEntity;

/**
 * Review (round2c): the starter's own outbox ({@code idem.outbox.operations}) delivers through
 * {@code interceptor.resumeTransport(new JdkClientHttpRequestFactory(), ...)}: a factory with no
 * read timeout, under the starter's default policy with no attemptTimeout. Commits a8067c49 and
 * c06eb6b9 bounded every queued/resumed attempt of the java.net.http and OkHttp adapters ("never
 * unbounded", 30 s by default) because an attempt to a server that accepts the connection and never
 * answers holds its outbox lane and lease forever, never retried with its key. The Spring starter,
 * configured exactly as docs/spring.md shows, still has that hang: the first delivery attempt never
 * ends, the operation stays IN_FLIGHT and is never retried, although the target answers the second
 * connection at once.
 */
class ReviewStarterOutboxAttemptUnboundedTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class));

  @Test
  void aQueuedDeliveryToATargetThatNeverAnswersIsBoundedAndRetriedWithItsKey(@TempDir Path dir) throws Exception {
    try (HangFirstServer server = new HangFirstServer()) {
      IdempotencyKey key = IdempotencyKey.generate();
      OperationId id = new OperationId(OperationId.DEFAULT_SCOPE, "create-order", key);
      runner.withPropertyValues("idem.directory=" + dir, "idem.shutdown-timeout=0s",
          "idem.outbox.operations=create-order").run(context -> {
            IdempotencyInterceptor idem = context.getBean(IdempotencyInterceptor.class);
            idem.enqueue("create-order", key, RequestEntity.post(server.url("/orders"))
                .contentType(MediaType.APPLICATION_JSON).body("{\"item\":\"book\"}"));
            assertTrue(server.firstReceived.await(10, TimeUnit.SECONDS), "the outbox sent the first attempt");
            IdempotentExecutor executor = context.getBean(IdempotentExecutor.class);
            // The default bound is 30 s; the backoff and the outbox's next poll come on top (42 s
            // seen on a loaded 2-core machine), so wait up to 120 s: only a hang runs that long.
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < end
                && executor.find(id).orElseThrow().state() != OperationState.SUCCEEDED) {
              Thread.sleep(200);
            }
            assertEquals(OperationState.SUCCEEDED, executor.find(id).orElseThrow().state(),
                "the hung first attempt should time out and the retry (answered at once) succeed; connections: "
                    + server.connections.get());
            assertEquals(List.of(key.value(), key.value()), server.keys, "both attempts carry the key");
          });
    }
  }

  /** Connection 0 reads its request and never answers; every later one answers 201 at once. */
  static final class HangFirstServer implements AutoCloseable {
    final ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    final AtomicInteger connections = new AtomicInteger();
    final CountDownLatch firstReceived = new CountDownLatch(1);
    final List<String> keys = new CopyOnWriteArrayList<>();
    final List<Socket> open = new CopyOnWriteArrayList<>();

    HangFirstServer() throws Exception {
      Thread t = new Thread(this::acceptLoop, "hang-first-server");
      t.setDaemon(true);
      t.start();
    }

    URI url(String path) {
      return URI.create("http://127.0.0.1:" + socket.getLocalPort() + path);
    }

    private void acceptLoop() {
      while (!socket.isClosed()) {
        try {
          Socket s = socket.accept();
          open.add(s);
          int n = connections.getAndIncrement();
          Thread h = new Thread(() -> serve(s, n), "hang-first-conn-" + n);
          h.setDaemon(true);
          h.start();
        } catch (Exception e) {
          return;
        }
      }
    }

    private void serve(Socket s, int n) {
      try {
        BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
        String line;
        int length = 0;
        while ((line = in.readLine()) != null && !line.isEmpty()) {
          int colon = line.indexOf(':');
          if (colon > 0) {
            String name = line.substring(0, colon).trim();
            String value = line.substring(colon + 1).trim();
            if (name.equalsIgnoreCase("Idempotency-Key")) {
              keys.add(value);
            } else if (name.equalsIgnoreCase("Content-Length")) {
              length = Integer.parseInt(value);
            }
          }
        }
        for (int i = 0; i < length; i++) {
          in.read();
        }
        if (n == 0) {
          firstReceived.countDown();
          return; // never answers; the socket stays open
        }
        OutputStream out = s.getOutputStream();
        out.write("HTTP/1.1 201 Created\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            .getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        s.close();
      } catch (Exception e) {
        // client gave up
      }
    }

    @Override
    public void close() throws Exception {
      socket.close();
      for (Socket s : open) {
        s.close();
      }
    }
  }
}
