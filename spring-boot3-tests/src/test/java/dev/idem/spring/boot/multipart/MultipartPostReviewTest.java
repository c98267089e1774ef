package dev.idem.spring.boot.multipart;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.multipart.MultipartFile;

/**
 * A guarded POST with a {@code multipart/form-data} body (an HTML upload form, {@code curl -F}) to a
 * handler that reads it as Spring MVC apps do ({@code @RequestParam MultipartFile},
 * {@code @RequestParam String} for a text field). The guard reads the body to fingerprint it, and its
 * request (CachedBodyRequest) replays the bytes through getInputStream and, since the fix, gives a
 * url-encoded form's parameters; but multipart parameters and parts come from the container's
 * {@code getParts()}, which Tomcat parses from the stream the guard already read: the handler finds
 * no part. Without the key header the same request works.
 *
 * <p>Expected: 200 "note hello, file 5 bytes" with the key as without it. Actual: an error (no part).
 */
@SpringBootTest(classes = MultipartPostReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.store=datasource"})
class MultipartPostReviewTest {
  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, AppDatabase.withOrders("idem-multipart-"));
  }

  @SpringBootApplication
  @Import(Uploads.class)
  static class App {}

  @RestController
  static class Uploads {
    @PostMapping("/uploads")
    @Idempotent(keyRequired = false)
    String upload(@RequestParam String note, @RequestParam MultipartFile file) {
      return "note " + note + ", file " + file.getSize() + " bytes";
    }

    @PostMapping("/tx-uploads")
    @Idempotent(keyRequired = false, transactional = true)
    String txUpload(@RequestParam String note, @RequestParam MultipartFile file) {
      return "note " + note + ", file " + file.getSize() + " bytes";
    }
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  static final String BOUNDARY = "----idemReviewBoundary";

  @LocalServerPort
  int port;

  private HttpResponse<String> post(String path, String key) throws Exception {
    String body = "--" + BOUNDARY + "\r\n"
        + "Content-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n"
        + "--" + BOUNDARY + "\r\n"
        + "Content-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
        + "Content-Type: text/plain\r\n\r\nabcde\r\n"
        + "--" + BOUNDARY + "--\r\n";
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Content-Type", "multipart/form-data; boundary=" + BOUNDARY)
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      b.header("Idempotency-Key", key);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aKeyedMultipartPostReachesTheHandlerWithItsParts() throws Exception {
    check("/uploads", "k-multipart-1");
  }

  @Test
  void aKeyedMultipartPostReachesATransactionalHandlerWithItsParts() throws Exception {
    check("/tx-uploads", "k-multipart-2");
  }

  private void check(String path, String key) throws Exception {
    HttpResponse<String> unkeyed = post(path, null);
    HttpResponse<String> keyed = post(path, key);
    String seen = "POST " + path + " multipart: without a key " + unkeyed.statusCode() + " '" + unkeyed.body()
        + "', with a key " + keyed.statusCode() + " '" + keyed.body() + "'";
    assertEquals(200, unkeyed.statusCode(), seen);
    assertEquals("note hello, file 5 bytes", unkeyed.body(), seen);
    assertEquals(200, keyed.statusCode(), seen);
    assertEquals("note hello, file 5 bytes", keyed.body(), seen);
  }
}
