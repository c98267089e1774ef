package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Servlet filter in a real Jetty 12 (ee10) on a loopback port 0: a client that goes away while
 * an over-cap response streams gets the stored result on its retry, not a second run.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class ServletFilterClientGoneTest {
  private final AtomicInteger runs = new AtomicInteger();
  private final CountDownLatch clientGone = new CountDownLatch(1);
  private final CountDownLatch firstDone = new CountDownLatch(1);
  private Server server;
  private IdempotencyGuard guard;

  @AfterEach
  void tearDown() throws Exception {
    if (server != null) {
      server.stop();
    }
    if (guard != null) {
      guard.close();
    }
  }

  /**
   * As for the JDK adapter: a response over the capture cap streams to the client; when the client
   * has gone, the servlet's write throws after its effect; before the fix the filter abandoned the
   * claim, and the client's retry ran the servlet a second time.
   */
  @Test
  void aClientThatDisconnectsWhileAnOverCapResponseStreamsDoesNotGetASecondEffectOnRetry() throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).maxCapturedBody(1024).build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new HttpServlet() {
      @Override
      protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        req.getInputStream().readAllBytes();
        int run = runs.incrementAndGet(); // the effect
        resp.setStatus(201);
        resp.setContentType("text/plain");
        ServletOutputStream out = resp.getOutputStream();
        byte[] chunk = new byte[8192];
        out.write(chunk); // past the cap: streamed from here on
        out.flush();
        if (run == 1) {
          try {
            clientGone.await(20, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          for (int i = 0; i < 100_000; i++) { // fails long before the end, on the reset connection
            out.write(chunk);
            out.flush();
          }
        }
      }
    }), "/*");
    Filter done = (request, response, chain) -> {
      try {
        chain.doFilter(request, response);
      } finally {
        firstDone.countDown();
      }
    };
    context.addFilter(new FilterHolder(done), "/*", EnumSet.of(DispatcherType.REQUEST));
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard)), "/*", EnumSet.of(DispatcherType.REQUEST));
    server.setHandler(context);
    server.start();
    int port = connector.getLocalPort();

    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(("POST /reports HTTP/1.1\r\nHost: localhost\r\nIdempotency-Key: k-report\r\n"
          + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}").getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      String head = readHead(socket.getInputStream());
      assertTrue(head.startsWith("HTTP/1.1 201"), head);
      socket.setSoLinger(true, 0); // a reset, as a client's timeout often ends it
    }
    clientGone.countDown();
    assertTrue(firstDone.await(20, TimeUnit.SECONDS), "the first request ended");
    HttpResponse<String> retry = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/reports")).timeout(Duration.ofSeconds(10))
            .header("Idempotency-Key", "k-report").header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
        HttpResponse.BodyHandlers.ofString());

    assertEquals(201, retry.statusCode());
    assertEquals(1, runs.get(), "the servlet's effect ran again on the client's retry");
  }

  private static String readHead(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    while (head.indexOf("\r\n\r\n") < 0) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      head.append((char) b);
    }
    return head.toString();
  }
}
