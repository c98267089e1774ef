package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review: a handler whose answer is content-coded ({@code Content-Encoding: gzip}: a service that
 * relays an upstream's compressed answer, a pre-compressed representation, a compression filter
 * mapped after the guard) is stored with its compressed bytes, but {@code Content-Encoding} is not
 * on the replay allowlist: the retry gets the gzip bytes labelled {@code application/json} with no
 * coding, which no client can read. The stored body and its coding must travel together.
 */
class ReviewReplayContentEncodingTest {
  private static final String JSON = "{\"id\":\"ord_1\",\"status\":\"created\"}";
  private Server server;

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
  }

  @Test
  void theReplayOfAGzipAnswerCanBeDecodedAsTheFirstOne() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).purgeInterval(null).build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new HttpServlet() {
      @Override
      protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        runs.incrementAndGet();
        resp.setStatus(201);
        resp.setContentType("application/json");
        resp.setHeader("Content-Encoding", "gzip");
        resp.getOutputStream().write(gzip(JSON));
      }
    }), "/*");
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard)), "/*", EnumSet.of(DispatcherType.REQUEST));
    server.setHandler(context);
    server.start();
    URI uri = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/orders");

    HttpClient client = HttpClient.newHttpClient();
    try {
      HttpRequest post = HttpRequest.newBuilder(uri).header("Idempotency-Key", "k-gzip-1")
          .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"x\"}")).build();
      HttpResponse<byte[]> first = client.send(post, HttpResponse.BodyHandlers.ofByteArray());
      HttpResponse<byte[]> retry = client.send(post, HttpResponse.BodyHandlers.ofByteArray());

      assertEquals(201, first.statusCode());
      assertEquals(JSON, decode(first), "the first client reads its answer");
      assertEquals(1, runs.get(), "the retry did not run the handler");
      assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
      assertEquals(first.headers().firstValue("Content-Encoding"), retry.headers().firstValue("Content-Encoding"),
          "the replay says how its body is coded, as the first answer did");
      assertEquals(JSON, decode(retry), "the retrying client reads the same answer");
    } finally {
      guard.close();
    }
  }

  private static byte[] gzip(String s) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
      gz.write(s.getBytes(StandardCharsets.UTF_8));
    }
    return out.toByteArray();
  }

  /** As a client decodes a body: by the Content-Encoding it was given. */
  private static String decode(HttpResponse<byte[]> r) throws IOException {
    if (r.headers().firstValue("Content-Encoding").orElse("identity").equalsIgnoreCase("gzip")) {
      try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(r.body()))) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    }
    return new String(r.body(), StandardCharsets.UTF_8);
  }
}
