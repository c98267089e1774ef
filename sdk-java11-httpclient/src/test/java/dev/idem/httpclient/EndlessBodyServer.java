package dev.idem.httpclient;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A raw-socket server on an ephemeral port for leak tests. Every request is answered 200 with a
 * chunked body that never ends (one small chunk every 20 ms), or 201 with a short body if not
 * {@code endless}; the connection {@code hangOn} reads its request and never answers; with
 * {@link #stallingAfter} every connection sends a given head and then nothing. It counts down
 * {@link #clientClosed} when the client gives a connection up.
 */
final class EndlessBodyServer implements AutoCloseable {
  final ServerSocket socket;
  final AtomicInteger connections = new AtomicInteger();
  final CountDownLatch received = new CountDownLatch(1);
  final CountDownLatch bodyStarted = new CountDownLatch(1);
  final CountDownLatch clientClosed = new CountDownLatch(1);
  /** The Idempotency-Key header of every request read, in order of arrival. */
  final java.util.List<String> keys = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final int hangOn;
  private final boolean endless;
  /** If set, every connection answers this status line and headers, then sends nothing more. */
  private final String stalledHead;

  /** Every connection answers 200 with an endless body. */
  EndlessBodyServer() throws IOException {
    this(-1, true);
  }

  /**
   * @param hangOn the connection index that reads the request and never answers, or -1
   * @param endless whether the others answer 200 with an endless body, or 201 with a short one
   */
  EndlessBodyServer(int hangOn, boolean endless) throws IOException {
    this(hangOn, endless, null);
  }

  /**
   * Every connection answers {@code head} (status line and headers, with the blank line) and then
   * sends nothing more: a body that stalls, for as long as the client waits.
   */
  static EndlessBodyServer stallingAfter(String head) throws IOException {
    return new EndlessBodyServer(-1, false, head);
  }

  private EndlessBodyServer(int hangOn, boolean endless, String stalledHead) throws IOException {
    this.hangOn = hangOn;
    this.endless = endless;
    this.stalledHead = stalledHead;
    socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::accept, "endless-body-server");
    t.setDaemon(true);
    t.start();
  }

  URI url(String path) {
    return URI.create("http://127.0.0.1:" + socket.getLocalPort() + path);
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
      if (!RawRequest.read(in, h -> {
        if (h.regionMatches(true, 0, "idempotency-key:", 0, 16)) {
          keys.add(h.substring(16).trim());
        }
      })) {
        return;
      }
      received.countDown();
      OutputStream out = s.getOutputStream();
      if (stalledHead != null) {
        out.write(stalledHead.getBytes(StandardCharsets.US_ASCII));
        out.flush();
      }
      if (n == hangOn || stalledHead != null) {
        if (in.read() < 0) {
          clientClosed.countDown();
        }
        return;
      }
      if (!endless) {
        out.write("HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
            .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return;
      }
      out.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      byte[] chunk = new byte[64];
      java.util.Arrays.fill(chunk, (byte) 'x');
      while (true) { // a write fails once the client closes its end
        out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(chunk);
        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        bodyStarted.countDown();
        Thread.sleep(20);
      }
    } catch (IOException e) {
      clientClosed.countDown();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
