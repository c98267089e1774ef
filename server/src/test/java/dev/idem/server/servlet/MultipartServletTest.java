package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.MultipartConfigElement;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.Part;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A keyed multipart POST behind the {@link IdempotencyFilter} on Jetty: the container parses the
 * parts (the guard asks for them rather than reading the stream), so the handler still has them,
 * and the guard fingerprints them, so a key reused with another file is refused, not replayed.
 */
class MultipartServletTest {
  private static final String BOUNDARY = "----idemBoundary";
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final AtomicInteger runs = new AtomicInteger();
  private IdempotencyGuard guard;
  private Server server;
  private URI base;

  void start(int maxRequestBody) throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).maxRequestBody(maxRequestBody).build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    ServletHolder uploads = new ServletHolder(new Uploads());
    uploads.getRegistration().setMultipartConfig(new MultipartConfigElement(""));
    context.addServlet(uploads, "/uploads");
    context.addServlet(new ServletHolder(new Uploads()), "/no-config");
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard, r -> "alice")), "/*",
        EnumSet.of(DispatcherType.REQUEST));
    server.setHandler(context);
    server.start();
    base = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
  }

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
    if (guard != null) {
      guard.close();
    }
  }

  @Test
  void aKeyedUploadReachesTheHandlerWithItsPartsAndAnotherFileUnderTheSameKeyIsRefused() throws Exception {
    start(1024 * 1024);
    HttpResponse<String> first = post("/uploads", "k-1", "a.txt", "abcde");
    HttpResponse<String> again = post("/uploads", "k-1", "a.txt", "abcde");
    HttpResponse<String> otherFile = post("/uploads", "k-1", "a.txt", "abcdX");
    HttpResponse<String> otherName = post("/uploads", "k-1", "b.txt", "abcde");

    assertEquals("note hello, file a.txt 5 bytes", first.body(), "the handler has its parts");
    assertEquals(200, again.statusCode());
    assertEquals("note hello, file a.txt 5 bytes", again.body());
    assertEquals("true", again.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse("(not replayed)"));
    assertEquals(422, otherFile.statusCode(), "another file's content under the key: " + otherFile.body());
    assertEquals(422, otherName.statusCode(), "another file name under the key: " + otherName.body());
    assertEquals(1, runs.get(), "one upload ran");
  }

  @Test
  void partsOverTheCapAreRefusedAsTooLarge() throws Exception {
    start(10);
    HttpResponse<String> small = post("/uploads", "k-small", "a.txt", "abc");
    HttpResponse<String> large = post("/uploads", "k-large", "a.txt", "0123456789");

    assertEquals(200, small.statusCode(), "the parts hold 8 bytes, within the cap of 10: " + small.body());
    assertEquals(413, large.statusCode(), large.body());
    assertEquals(1, runs.get(), "the upload over the cap did not run");
  }

  @Test
  void withoutAMultipartConfigTheBodyIsReadAsBefore() throws Exception {
    start(1024 * 1024);
    HttpResponse<String> keyed = post("/no-config", "k-plain", "a.txt", "abcde");
    HttpResponse<String> otherFile = post("/no-config", "k-plain", "a.txt", "abcdX");

    assertEquals(200, keyed.statusCode(), keyed.body());
    assertEquals("no parts", keyed.body());
    assertEquals(422, otherFile.statusCode(), "the raw body is fingerprinted: " + otherFile.body());
    assertEquals(1, runs.get());
  }

  private HttpResponse<String> post(String path, String key, String fileName, String content) throws Exception {
    String body = "--" + BOUNDARY + "\r\n"
        + "Content-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n"
        + "--" + BOUNDARY + "\r\n"
        + "Content-Disposition: form-data; name=\"file\"; filename=\"" + fileName + "\"\r\n"
        + "Content-Type: text/plain\r\n\r\n" + content + "\r\n"
        + "--" + BOUNDARY + "--\r\n";
    return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "multipart/form-data; boundary=" + BOUNDARY).header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private final class Uploads extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException, ServletException {
      runs.incrementAndGet();
      resp.setContentType("text/plain;charset=UTF-8");
      Part file;
      try {
        file = req.getPart("file");
      } catch (IllegalStateException | ServletException noConfig) {
        // Jetty 12.1 answers getPart without a multipart config with a ServletException (400 bad multipart).
        resp.getWriter().print("no parts");
        return;
      }
      String note = new String(req.getPart("note").getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      resp.getWriter().print("note " + note + ", file " + file.getSubmittedFileName() + " " + file.getSize()
          + " bytes");
    }
  }
}
