package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import jakarta.servlet.DispatcherType;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
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

  /**
   * Adds {@code guard}'s {@link IdempotencyFilter} to {@code context} for every path, on REQUEST and
   * ASYNC dispatches (as the README sets it up), then starts it as {@link #start} does.
   */
  static LoopbackJetty guarded(ServletContextHandler context, IdempotencyGuard guard) throws Exception {
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard)), "/*",
        EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
    return start(context);
  }

  /**
   * Asserts that the container answers {@code status} and {@code body} without the guard (the GET
   * of {@link #send} without a key), and that the keyed request gets the very same answer through it.
   *
   * @param what the guarded case, for the failure message
   */
  void assertGuardedAnswersAsUnguarded(String pathAndQuery, String key, String json, int status, String body,
      String what) throws Exception {
    HttpResponse<String> unguarded = send(pathAndQuery, null, json);
    assertEquals(status, unguarded.statusCode(), unguarded.body());
    assertEquals(body, unguarded.body(), "the container's own answer, without the guard (an unkeyed GET)");
    HttpResponse<String> guarded = send(pathAndQuery, key, json);
    assertEquals(status, guarded.statusCode(), what + ": " + guarded.body());
    assertEquals(body, guarded.body(), what);
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
