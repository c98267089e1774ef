package dev.idem.examples.exit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A target that is down, then comes up on the same port: what the app journaled while it was down
 * names this port, so the resumed delivery must find the target there.
 *
 * <p>Down: a loopback port chosen at run time, held by a bound socket that does not listen, so every
 * connection to it is refused and no other process can take it. Up ({@link #comeUp}): the port
 * listens and relays every connection, byte for byte, to the reference server (which binds its own
 * ephemeral port and cannot be told which one). Relay threads are daemons; a relay that fails ends
 * its connection, which the client sees.
 */
final class LateTarget implements AutoCloseable {
  private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

  private final int port;
  private final Socket reservation;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile ServerSocket listener;

  private LateTarget(Socket reservation) {
    this.reservation = reservation;
    this.port = reservation.getLocalPort();
  }

  /** A new, down target on a port that nothing listens on. */
  static LateTarget down() throws IOException {
    Socket s = new Socket();
    s.bind(new InetSocketAddress(LOOPBACK, 0));
    return new LateTarget(s);
  }

  URI url(String path) {
    return URI.create("http://" + LOOPBACK.getHostAddress() + ":" + port + path);
  }

  /**
   * Brings the target up: from now on the port relays to {@code server}.
   *
   * @throws java.net.BindException if another process took the port in the instant between
   *     releasing the reservation and listening (the caller retries with a new target)
   */
  void comeUp(URI server) throws IOException {
    reservation.close();
    ServerSocket ss = new ServerSocket();
    ss.setReuseAddress(true);
    ss.bind(new InetSocketAddress(LOOPBACK, port));
    listener = ss;
    Thread acceptor = new Thread(() -> {
      while (!ss.isClosed()) {
        try {
          Socket in = ss.accept();
          Socket out = new Socket(LOOPBACK, server.getPort());
          sockets.add(in);
          sockets.add(out);
          relay(in, out);
          relay(out, in);
        } catch (IOException e) {
          // closed, or the server refused: the client's connection ends and it sees a failure
        }
      }
    }, "late-target-" + port);
    acceptor.setDaemon(true);
    acceptor.start();
  }

  private static void relay(Socket from, Socket to) {
    Thread t = new Thread(() -> {
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        in.transferTo(out);
      } catch (IOException e) {
        // the other side closed
      } finally {
        closeQuietly(from);
        closeQuietly(to);
      }
    }, "late-target-relay");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void close() {
    closeQuietly(reservation);
    if (listener != null) {
      try {
        listener.close();
      } catch (IOException e) {
        // closing
      }
    }
    sockets.forEach(LateTarget::closeQuietly);
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closing
    }
  }
}
