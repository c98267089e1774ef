package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.support.HeapLimitedJvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A body larger than the server takes is answered 413, as a real API (or the proxy in front of
 * it) would: not processed, no effect, the key not claimed, and never held in memory whole.
 */
class RequestBodyLimitTest {
  private final TestClient client = new TestClient();

  @Test
  void aBodyOverTheLimitIs413WithoutAnEffectAndLeavesTheKeyFree() throws Exception {
    try (IdempotentServer server = IdempotentServer.builder().maxBodySize(1024).start()) {
      URI url = server.url("/orders");
      String tooBig = "{\"note\":\"" + "x".repeat(1024) + "\"}";

      TestClient.Answer refused = client.post(url, "k-big", tooBig);

      assertEquals(413, refused.status(), refused.body());
      assertEquals("application/problem+json", refused.contentType());
      assertEquals(0, server.effectCount("k-big"));
      assertEquals(1, server.requestCount(), "the refused request is still recorded");
      // Nothing was claimed: the same key with a body that fits is a first attempt, not a 422.
      TestClient.Answer fits = client.post(url, "k-big", "{\"note\":\"short\"}");
      assertEquals(201, fits.status(), fits.body());
      assertEquals(1, server.effectCount("k-big"));
    }
  }

  @Test
  void aBodyAtTheLimitIsProcessed() throws Exception {
    try (IdempotentServer server = IdempotentServer.builder().maxBodySize(16).start()) {
      TestClient.Answer a = client.post(server.url("/orders"), "k-16", "{\"a\":\"1234567\"}");   // 16 bytes
      assertEquals(201, a.status(), a.body());
      assertEquals(1, server.effectCount("k-16"));
    }
  }

  @Test
  void aLimitRaisedAboveTheDefaultTakesALargerBody() throws Exception {
    // The guard behind the front end has a request body cap of its own (1 MiB by default); a
    // raised maxBodySize must raise it too, or the upload still gets 413, from the guard.
    try (IdempotentServer server = IdempotentServer.builder().maxBodySize(4L << 20).start()) {
      String twoMiB = "{\"doc\":\"" + "x".repeat(2 << 20) + "\"}";
      TestClient.Answer a = client.post(server.url("/documents"), "k-upload", twoMiB);
      assertEquals(201, a.status(), a.body());
      assertEquals(1, server.effectCount("k-upload"));
      assertEquals(twoMiB, server.recordedRequests().get(0).body());
    }
  }

  @Test
  void aLimitOverWhatOneArrayHoldsIsRefused() {
    // The body is held in one byte array to be fingerprinted.
    IdempotentServer.Builder builder = IdempotentServer.builder();
    assertThrows(IllegalArgumentException.class, () -> builder.maxBodySize(Integer.MAX_VALUE));
    builder.maxBodySize(Integer.MAX_VALUE - 1);
  }

  @Test
  void aHugeBodyIsRefusedWithoutExhaustingTheHeap(@TempDir Path dir) throws Exception {
    // 64 MiB against a 32 MiB heap, with the default limit: before the limit, the server thread
    // died of OutOfMemoryError and the client waited for an answer that never came.
    String out = HeapLimitedJvm.run(dir, HugeBodyClient.class);
    assertEquals(413, HeapLimitedJvm.figure(out, "status"), out);
    assertEquals(0, HeapLimitedJvm.figure(out, "effects"), out);
  }

  /** Runs in the heap-limited child: one server, one 64 MiB POST over a raw socket. */
  public static final class HugeBodyClient {
    public static void main(String[] args) throws IOException {
      long size = 64L << 20;
      try (IdempotentServer server = IdempotentServer.start()) {
        URI url = server.url("/orders");
        try (Socket socket = new Socket(url.getHost(), url.getPort())) {
          socket.setSoTimeout(60_000);
          OutputStream out = socket.getOutputStream();
          out.write(("POST /orders HTTP/1.1\r\nHost: " + url.getAuthority() + "\r\nIdempotency-Key: k-huge\r\n"
              + "Content-Type: application/octet-stream\r\nContent-Length: " + size + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
          byte[] chunk = new byte[64 * 1024];
          for (long written = 0; written < size; written += chunk.length) {
            out.write(chunk);
          }
          out.flush();
          String statusLine = new BufferedReader(new InputStreamReader(socket.getInputStream(),
              StandardCharsets.US_ASCII)).readLine();
          System.out.println("status=" + statusLine.split(" ")[1]);
        }
        System.out.println("effects=" + server.effectCount("k-huge"));
        assertTrue(server.recordedRequests().get(0).body().length() <= IdempotentServer.DEFAULT_MAX_BODY_SIZE);
      }
    }
  }
}
