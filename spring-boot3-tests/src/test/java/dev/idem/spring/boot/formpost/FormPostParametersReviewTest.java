package dev.idem.spring.boot.formpost;

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

/**
 * A guarded POST with a form-encoded body ({@code application/x-www-form-urlencoded}: an HTML form,
 * {@code curl -d qty=1}) to a handler that reads it as Spring MVC apps do, through
 * {@code @RequestParam} (or a {@code @ModelAttribute}). The guard reads the body through
 * {@code getInputStream()} to fingerprint it and hands the handler a wrapper that replays the bytes
 * through {@code getInputStream()} and {@code getReader()} only; the container (Tomcat) parses a
 * POST's form parameters from the body only if nobody has read the stream, so the handler finds no
 * parameter: every keyed form POST is refused 400 (MissingServletRequestParameterException:
 * "Required request parameter 'qty' ... is not present"), in lease mode and in transactional mode
 * (whose wrapper overrides {@code getInputStream()} only). In lease mode the same request without
 * the key header works; a transactional handler loses its parameters even without a key.
 *
 * <p>Expected: 200 "qty 1" with the key as without it. Actual: 400.
 */
@SpringBootTest(classes = FormPostParametersReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.store=datasource"})
class FormPostParametersReviewTest {
  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, AppDatabase.withOrders("idem-form-post-"));
  }

  @SpringBootApplication
  @Import(Orders.class)
  static class App {}

  @RestController
  static class Orders {
    @PostMapping("/orders")
    @Idempotent(keyRequired = false)
    String order(@RequestParam String qty) {
      return "qty " + qty;
    }

    @PostMapping("/tx-orders")
    @Idempotent(keyRequired = false, transactional = true)
    String txOrder(@RequestParam String qty) {
      return "qty " + qty;
    }
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;

  private HttpResponse<String> post(String path, String key) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString("qty=1"));
    if (key != null) {
      b.header("Idempotency-Key", key);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aKeyedFormPostReachesTheHandlerWithItsParameters() throws Exception {
    check("/orders", "k-form-post-1");
  }

  @Test
  void aKeyedFormPostReachesATransactionalHandlerWithItsParameters() throws Exception {
    check("/tx-orders", "k-form-post-2");
  }

  private void check(String path, String key) throws Exception {
    HttpResponse<String> unkeyed = post(path, null);
    HttpResponse<String> keyed = post(path, key);
    String seen = "POST " + path + " qty=1: without a key " + unkeyed.statusCode() + " '" + unkeyed.body()
        + "', with a key " + keyed.statusCode() + " '" + keyed.body() + "'";
    assertEquals(200, keyed.statusCode(), seen);
    assertEquals(200, unkeyed.statusCode(), seen);
    assertEquals("qty 1", keyed.body(), seen);
  }
}
