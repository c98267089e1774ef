package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.http.StreamingHttpOutputMessage;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestClient;

/**
 * The starter wraps Boot's request factory builder so that keyed requests follow no redirect, and
 * that wrapper buffered every body sent through the factories it builds, keyed or not, until the
 * request was sent: a large upload sat whole in the app's memory. Now the body goes straight to
 * Boot's client. The JDK client is chosen here ({@code spring.http.client.factory} in Boot 3.5,
 * {@code spring.http.clients.imperative.factory} in 4.0): Reactor Netty's, Boot's choice when
 * WebFlux is present, runs a streamed body's writer on a Netty event loop, and this test once hung
 * there with the writer parked on that loop waiting for demand (Spring's OutputStreamPublisher);
 * that is Reactor Netty's client, not the starter's wrapper, which only hands the body on.
 */
@SpringBootTest(classes = TestApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "spring.http.client.factory=jdk",
    "spring.http.clients.imperative.factory=jdk",
    "idem.outbox.enabled=false",
    "idem.server.store=datasource"})
class LargeUploadTest {
  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    registry.add("idem.directory", () -> StarterTest.DIR.resolve("idem-large-upload").toString());
    // A database of its own: the guard opens its SQLite store once per JVM (see WebClientRedirectTest).
    registry.add("spring.datasource.url", () -> "jdbc:sqlite:" + StarterTest.DIR.resolve("upload.db"));
  }

  @Autowired
  ClientHttpRequestFactoryBuilder<?> requestFactories;

  /**
   * The server has bytes of a 64 MiB unkeyed upload while the app is still writing its first
   * 8 MiB (before, the wait below timed out: nothing left the app until the whole body had been
   * copied).
   */
  @Test
  void aLargeUnkeyedUploadThroughBootsRequestFactoryIsStreamedNotHeld() throws Exception {
    long size = 64L * 1024 * 1024;
    AtomicLong received = new AtomicLong();
    CountDownLatch firstBytes = new CountDownLatch(1);
    List<String> keys = new CopyOnWriteArrayList<>();
    HttpServer upload = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    upload.createContext("/uploads", exchange -> {
      keys.addAll(exchange.getRequestHeaders().getOrDefault("Idempotency-Key", List.of()));
      byte[] buf = new byte[64 * 1024];
      try (InputStream in = exchange.getRequestBody()) {
        for (int n; (n = in.read(buf)) >= 0; ) {
          received.addAndGet(n);
          firstBytes.countDown();
        }
      }
      exchange.sendResponseHeaders(204, -1);
      exchange.close();
    });
    upload.start();
    try {
      AtomicBoolean streamed = new AtomicBoolean();
      StreamingHttpOutputMessage.Body body = out -> {
        byte[] chunk = new byte[64 * 1024];
        for (long written = 0; written < size; written += chunk.length) {
          if (written == 8L * 1024 * 1024) {
            try {
              streamed.set(firstBytes.await(60, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new IOException(e);
            }
          }
          out.write(chunk);
        }
      };
      RestClient plain = RestClient.builder().requestFactory(requestFactories.build()).build();
      int status = plain.put().uri("http://localhost:" + upload.getAddress().getPort() + "/uploads")
          .contentType(MediaType.APPLICATION_OCTET_STREAM).body(body)
          .exchange((req, res) -> res.getStatusCode().value());
      assertEquals(204, status);
      assertTrue(streamed.get(), "the server had bytes while the app was still writing the body");
      assertEquals(size, received.get());
      assertEquals(List.of(), keys, "an unkeyed request");
    } finally {
      upload.stop(0);
    }
  }
}
