package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.spi.adapter.AdapterSupport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The starter's own resume transport ({@code resumeTransport(headers)}, what the outbox delivers
 * {@code idem.outbox.operations} through) bounds every attempt: the request's journaled timeout,
 * else the retry policy's attemptTimeout, else 30 s (AttemptBound), never none. Before, the outbox
 * used {@code new JdkClientHttpRequestFactory()} (no read timeout) and an attempt to a server that
 * never answered waited forever (ReviewStarterOutboxAttemptUnboundedTest in spring-boot3-tests).
 */
class ResumeAttemptBoundTest {
  private static final URI URL = URI.create("http://127.0.0.1:9/orders");

  @Test
  void theRequestsJournaledTimeoutComesFirst() throws Exception {
    assertEquals(Duration.ofMillis(700), timeoutSent(Duration.ofMillis(700), Duration.ofSeconds(5)));
  }

  @Test
  void withoutOneThePolicysAttemptTimeout() throws Exception {
    assertEquals(Duration.ofSeconds(5), timeoutSent(null, Duration.ofSeconds(5)));
  }

  @Test
  void withNeitherThirtySecondsNeverUnbounded() throws Exception {
    assertEquals(Duration.ofSeconds(30), timeoutSent(null, null)); // the starter's defaults
  }

  @Test
  void anAttemptPastItsBoundIsRetriedWithTheSameKey() throws Exception {
    InMemoryJournal journal = new InMemoryJournal();
    try (HangFirstServer server = new HangFirstServer();
        IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal)
            .retryPolicy(RetryPolicy.builder().maxAttempts(5).build()).random(() -> 0.0).build()) {
      Transport resume = IdempotencyInterceptor.builder(executor).build().resumeTransport(r -> Map.of());
      IdempotencyKey key = IdempotencyKey.generate();
      RequestSnapshot journaled = RequestSnapshot.builder("POST", server.url("/orders"))
          .body("{\"sku\":\"A-1\"}".getBytes(StandardCharsets.UTF_8), "application/json")
          .timeout(Duration.ofSeconds(1)).build();

      executor.execute(Operation.builder("create-order", journaled).key(key).build(), resume);

      OperationRecord record = journal.find(new OperationId(OperationId.DEFAULT_SCOPE, "create-order", key))
          .orElseThrow();
      assertEquals(OperationState.SUCCEEDED, record.state());
      // The first attempt ended at its bound: a timed-out (ambiguous) attempt, retried. (On a loaded
      // machine the retry may time out too before its request is written; the last one succeeds.)
      assertEquals(Classification.AMBIGUOUS, record.attempts().get(0).classification(), record.attempts().toString());
      assertEquals("java.net.http.HttpTimeoutException", record.attempts().get(0).exceptionClass());
      assertTrue(server.keys.size() >= 2, "the hung request and its retry reached the server: " + server.keys);
      server.keys.forEach(k -> assertEquals(key.value(), k, "every attempt carries the key"));
    }
  }

  /** The bound the transport gives an attempt through its JDK client. */
  private static Duration timeoutSent(Duration requestTimeout, Duration attemptTimeout) {
    RetryPolicy.Builder policy = RetryPolicy.builder();
    if (attemptTimeout != null) {
      policy.attemptTimeout(attemptTimeout);
    }
    try (IdempotentExecutor executor = IdempotentExecutor.builder().journal(new InMemoryJournal())
        .retryPolicy(policy.build()).build()) {
      ClientSupport support = new ClientSupport(AdapterSupport.of(executor, AdapterSupport.DEFAULT_KEY_HEADER,
          KeyHeaderFormat.BARE, UntaggedPolicy.PASS_THROUGH), 1024, null);
      FactoryTransport transport = new FactoryTransport(support.jdkRequests(), support, r -> Map.of());
      RequestSnapshot snapshot = RequestSnapshot.builder("POST", URL).body("{}".getBytes(), "application/json")
          .timeout(requestTimeout).build();
      return transport.bound(snapshot);
    }
  }

  /** The first request read is never answered (its connection stays open); every later one gets 201 at once. */
  private static final class HangFirstServer implements AutoCloseable {
    final ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    final AtomicInteger connections = new AtomicInteger();
    final AtomicInteger requests = new AtomicInteger();
    final List<String> keys = new CopyOnWriteArrayList<>();
    final List<Socket> open = new CopyOnWriteArrayList<>();

    HangFirstServer() throws IOException {
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
          Thread h = new Thread(() -> serve(s), "hang-first-conn-" + n);
          h.setDaemon(true);
          h.start();
        } catch (IOException e) {
          return;
        }
      }
    }

    private void serve(Socket s) {
      try {
        BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
        String line;
        int length = 0;
        while ((line = in.readLine()) != null && !line.isEmpty()) {
          int colon = line.indexOf(':');
          if (colon > 0) {
            String name = line.substring(0, colon).trim();
            String value = line.substring(colon + 1).trim();
            if (name.equalsIgnoreCase(AdapterSupport.DEFAULT_KEY_HEADER)) {
              keys.add(value);
            } else if (name.equalsIgnoreCase("Content-Length")) {
              length = Integer.parseInt(value);
            }
          }
        }
        for (int i = 0; i < length; i++) {
          in.read();
        }
        if (requests.getAndIncrement() == 0) {
          return; // never answers; the socket stays open until close
        }
        OutputStream out = s.getOutputStream();
        out.write("HTTP/1.1 201 Created\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            .getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        s.close();
      } catch (IOException e) {
        // the client gave up
      }
    }

    @Override
    public void close() throws IOException {
      socket.close();
      for (Socket s : open) {
        s.close();
      }
    }
  }
}
