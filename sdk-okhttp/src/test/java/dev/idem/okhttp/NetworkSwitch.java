package dev.idem.okhttp;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketAddress;
import javax.net.SocketFactory;

/**
 * The network as an OkHttp client sees it, switched by the test: while it is down every connect
 * fails with {@link ConnectException}, as a refused connection does, before a byte is written;
 * while it is up, sockets connect for real. For tests on virtual time, where a real closed port
 * would cost hundreds of real connects (and with them the rare TCP self-connect on an ephemeral
 * port). Thread-safe.
 */
final class NetworkSwitch extends SocketFactory {
  private volatile boolean up;
  private volatile int refused;

  void up() {
    up = true;
  }

  /** Connects refused so far. */
  int refused() {
    return refused;
  }

  @Override
  public Socket createSocket() {
    return new Socket() {
      @Override
      public void connect(SocketAddress endpoint, int timeout) throws IOException {
        if (!up) {
          refused++;
          throw new ConnectException("Connection refused (the test's network is down)");
        }
        super.connect(endpoint, timeout);
      }
    };
  }

  // OkHttp only asks for unconnected sockets; these are never used.
  @Override
  public Socket createSocket(String host, int port) {
    throw new UnsupportedOperationException();
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress localHost, int localPort) {
    throw new UnsupportedOperationException();
  }

  @Override
  public Socket createSocket(InetAddress host, int port) {
    throw new UnsupportedOperationException();
  }

  @Override
  public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) {
    throw new UnsupportedOperationException();
  }
}
