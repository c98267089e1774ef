package dev.idem.server.servlet;

import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/** A Jetty 12 serving one servlet context on a free loopback port, for tests that stage their own. */
final class LoopbackJetty implements AutoCloseable {
  private final Server server;
  private final int port;

  private LoopbackJetty(Server server, int port) {
    this.server = server;
    this.port = port;
  }

  /** Starts {@code context}, its servlets and filters added already, on 127.0.0.1 and a free port. */
  static LoopbackJetty start(ServletContextHandler context) throws Exception {
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(context);
    server.start();
    return new LoopbackJetty(server, connector.getLocalPort());
  }

  int port() {
    return port;
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }
}
