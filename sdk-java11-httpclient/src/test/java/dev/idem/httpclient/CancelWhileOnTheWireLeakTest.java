package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * sendAsync's Javadoc: cancelling the future stops further attempts and leaves the operation
 * PENDING. The attempt already on the wire still gets its response; nobody will ever read that
 * response's body, so it must be released (the JDK then closes the connection). It is not: the
 * body is held with no demand, and the connection stays open for as long as the server likes.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class CancelWhileOnTheWireLeakTest {
  @Test
  void theResponseOfTheAttemptOnTheWireIsReleasedAfterACancel() throws Exception {
    CountDownLatch received = new CountDownLatch(1);
    CountDownLatch answer = new CountDownLatch(1);
    CountDownLatch clientClosed = new CountDownLatch(1);
    try (ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread t = new Thread(() -> {
        try (Socket s = socket.accept()) {
          InputStream in = new BufferedInputStream(s.getInputStream());
          if (!RawRequest.read(in)) {
            return;
          }
          received.countDown();
          answer.await();
          OutputStream out = s.getOutputStream();
          out.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          byte[] chunk = new byte[8192];
          while (true) { // an endless body; a write fails once the client closes its end
            out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(chunk);
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
          }
        } catch (IOException e) {
          clientClosed.countDown();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      t.setDaemon(true);
      t.start();

      Fixture f = new Fixture();
      URI url = URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/orders");
      CompletableFuture<IdempotentHttpResponse<String>> future = f.client.operation("create-order")
          .sendAsync(Fixture.post(url, "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());
      assertTrue(received.await(5, TimeUnit.SECONDS), "the attempt reached the server");
      future.cancel(false);
      answer.countDown(); // the 200 arrives after the caller went away
      assertTrue(clientClosed.await(5, TimeUnit.SECONDS),
          "5 s after the cancel, the abandoned response's body is still held open with no reader");
    }
  }
}
