package dev.idem.server.jdkhttp;

import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpServer;
import dev.idem.server.AdapterContract;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.support.OrderApp;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** The JDK HttpServer filter on a loopback port 0. */
class HttpServerFilterTest extends AdapterContract {
  private HttpServer server;
  private ExecutorService executor;

  @Override
  protected URI start(IdempotencyGuard guard) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    executor = Executors.newFixedThreadPool(40);
    server.setExecutor(executor);
    HttpContext context = server.createContext("/", exchange -> {
      String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
      String mode = exchange.getRequestHeaders().getFirst("X-Mode");
      byte[] body = exchange.getRequestBody().readAllBytes();
      OrderApp.Answer a;
      try {
        a = app.handle(key, mode, body);
      } catch (InterruptedException e) {
        throw new IOException(e);
      }
      exchange.getResponseHeaders().set("Content-Type", a.contentType());
      if (a.location() != null) {
        exchange.getResponseHeaders().set("Location", a.location());
      }
      exchange.sendResponseHeaders(a.status(), a.body().length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(a.body());
      }
    });
    context.getFilters().add(new IdempotencyHttpFilter(guard, e -> e.getRequestHeaders().getFirst("X-Caller")));
    server.start();
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
  }

  @Override
  protected void stop() {
    if (server != null) {
      server.stop(0);
      executor.shutdownNow();
    }
  }
}
