package dev.idem.webhooks;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Serves a {@link WebhookReceiver} on the JDK's {@code com.sun.net.httpserver.HttpServer}:
 *
 * <pre>{@code
 * HttpServer server = HttpServer.create(new InetSocketAddress(8080), 0);
 * server.createContext("/webhooks/stripe", new JdkWebhookHandler(receiver));
 * server.setExecutor(Executors.newFixedThreadPool(16));   // accepts wait for a commit: use threads
 * server.start();
 * }</pre>
 *
 * <p>The body is read up to the source's cap and no further; a delivery over the cap is answered
 * 413 with the receiver's {@code Connection: close}, since its rest stays unread on the
 * connection. Thread-safe.
 */
public final class JdkWebhookHandler implements HttpHandler {
  private final WebhookReceiver receiver;

  /**
   * Creates a handler that serves the receiver's endpoint.
   *
   * @param receiver the endpoint to serve
   */
  public JdkWebhookHandler(WebhookReceiver receiver) {
    this.receiver = Objects.requireNonNull(receiver, "receiver");
  }

  /**
   * @param exchange the request
   * @throws IOException if reading or answering fails
   */
  @Override
  public void handle(HttpExchange exchange) throws IOException {
    try (exchange; InputStream in = exchange.getRequestBody()) {
      WebhookResponse r = receiver.handle(exchange.getRequestMethod(), exchange.getRequestHeaders(), in);
      byte[] body = r.body().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", WebhookResponse.CONTENT_TYPE);
      r.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
      exchange.sendResponseHeaders(r.status(), body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }
}
