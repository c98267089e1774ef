package dev.idem.server.servlet;

import dev.idem.server.IdempotencyGuard;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/** A Jetty 12 serving one servlet context on a free loopback port, for tests that stage their own. */
final class LoopbackJetty implements AutoCloseable {
  private final Server server;
  private final int port;
  private final HttpClient http = HttpClient.newHttpClient();

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

  /**
   * Without a key, a GET, which the guard lets through untouched (a POST without one is refused
   * 400): the container's own answer, to compare the guarded one with. With a key, a POST of
   * {@code json} under it.
   *
   * @param pathAndQuery from the root, such as {@code /exports?start=stream}
   * @param key the idempotency key, or null for the unguarded GET
   */
  HttpResponse<String> send(String pathAndQuery, String key, String json) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
        .header("Content-Type", "application/json");
    if (key != null) {
      b.header(IdempotencyGuard.DEFAULT_KEY_HEADER, key);
    }
    b = key == null ? b.GET() : b.POST(HttpRequest.BodyPublishers.ofString(json));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }
}
