package dev.idem.server.servlet;

import dev.idem.server.IdempotencyGuard;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import java.net.URI;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * One Jetty on a free loopback port serving one servlet twice: under {@code /guarded/} behind the
 * guard's {@link IdempotencyFilter} (caller "alice"), anywhere else (say {@code /plain/}) without
 * it, so that a test compares the guarded answer, and its replay, with the container's own.
 */
final class PlainAndGuardedJetty implements AutoCloseable {
  private final Server server;
  /** The server's root, {@code http://127.0.0.1:PORT/}. */
  final URI base;

  private PlainAndGuardedJetty(Server server, URI base) {
    this.server = server;
    this.base = base;
  }

  static PlainAndGuardedJetty start(HttpServlet servlet, IdempotencyGuard guard) throws Exception {
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(servlet), "/*");
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard, r -> "alice")), "/guarded/*",
        EnumSet.of(DispatcherType.REQUEST));
    server.setHandler(context);
    server.start();
    return new PlainAndGuardedJetty(server, URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/"));
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }
}
