package dev.idem.okhttp;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A TCP relay in front of a test server that keeps every byte the client sent, so that a test can
 * tell what reached the wire whatever the server does with it (an HTTP/2 server that drops a reset
 * stream records nothing). It relays one client connection, on an ephemeral loopback port; the
 * client's bytes are complete once the client closed its side ({@link #clientBytes}), or a test
 * waits for the bytes it expects ({@link #clientBytesOnce}).
 */
final class ClientBytesRelay implements Closeable {
  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final ByteArrayOutputStream fromClient = new ByteArrayOutputStream();
  private final CountDownLatch clientDone = new CountDownLatch(1);
  private volatile Socket client;
  private volatile Socket upstream;

  ClientBytesRelay(InetSocketAddress target) throws IOException {
    this.target = target;
    this.listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    Thread accept = new Thread(this::relay, "client-bytes-relay");
    accept.setDaemon(true);
    accept.start();
  }

  /** The relay's port, on the loopback address. */
  int port() {
    return listener.getLocalPort();
  }

  /** Every byte the client sent, once it closed its side of the connection (or none came). */
  byte[] clientBytes(Duration wait) throws InterruptedException {
    if (!clientDone.await(wait.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("the client did not close its connection to the relay");
    }
    synchronized (fromClient) {
      return fromClient.toByteArray();
    }
  }

  /**
   * The client's bytes so far, once {@code until} holds for them: for what a client sends on a
   * connection it keeps open (an HTTP/2 connection's frames, say).
   */
  byte[] clientBytesOnce(Predicate<byte[]> until, Duration wait) throws InterruptedException {
    long deadline = System.nanoTime() + wait.toNanos();
    synchronized (fromClient) {
      for (byte[] bytes = fromClient.toByteArray(); ; bytes = fromClient.toByteArray()) {
        if (until.test(bytes)) {
          return bytes;
        }
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (left <= 0) {
          throw new AssertionError("the client's bytes never got there: " + bytes.length + " bytes");
        }
        fromClient.wait(left);
      }
    }
  }

  private void relay() {
    try (Socket c = listener.accept(); Socket u = new Socket()) {
      client = c;
      upstream = u;
      u.connect(target);
      Thread back = new Thread(() -> pump(u, c, null), "client-bytes-relay-back");
      back.setDaemon(true);
      back.start();
      pump(c, u, fromClient);
    } catch (IOException e) {
      // closed by the test: the bytes so far are all there are
    } finally {
      clientDone.countDown();
    }
  }

  /** Copies {@code from} to {@code to} until {@code from} ends, keeping a copy in {@code record}. */
  private static void pump(Socket from, Socket to, ByteArrayOutputStream record) {
    byte[] buf = new byte[8192];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      for (int n; (n = in.read(buf)) != -1; ) {
        if (record != null) {
          synchronized (record) {
            record.write(buf, 0, n);
            record.notifyAll();
          }
        }
        out.write(buf, 0, n);
        out.flush();
      }
      to.shutdownOutput();
    } catch (IOException e) {
      // one side went away: nothing more to copy
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    Socket c = client;
    if (c != null) {
      c.close();
    }
    Socket u = upstream;
    if (u != null) {
      u.close();
    }
  }
}
