package dev.idem.spring.boot.formpatch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A guarded PATCH with a form-encoded body ({@code application/x-www-form-urlencoded}, what an HTML
 * form or {@code curl -d} sends) in a plain Spring MVC app. Boot registers its
 * {@code FormContentFilter} (order -9900, on by default) before the guard's filter (order 0); for
 * PUT, PATCH and DELETE it reads the form body into parameters, so the guard reads an empty body and
 * fingerprints every such request alike. A key reused with another payload, which the guard
 * refuses (422, idem.server.mismatch-status) for JSON bodies, is then answered with the first
 * request's stored answer as a replay: the client is told its second change ({@code qty=5}) was
 * made, while only the first ({@code qty=1}) ever ran. (Any filter ordered before 0 that reads a
 * request's parameters, Spring Security's CSRF check on a form POST among them, would do the same;
 * not tested here.)
 *
 * <p>Expected: the second request, same key and another body, is refused 422. Actual: 200, the
 * first answer replayed.
 */
@SpringBootTest(classes = FormEncodedPatchFingerprintReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class FormEncodedPatchFingerprintReviewTest {
  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, AppDatabase.withOrders("idem-form-patch-"));
  }

  @SpringBootApplication
  @Import(Orders.class)
  static class App {}

  @RestController
  static class Orders {
    final List<String> changes = new CopyOnWriteArrayList<>();

    @PatchMapping("/orders/{id}")
    @Idempotent
    String change(@PathVariable String id, @RequestParam String qty) {
      changes.add(id + ":" + qty);
      return "order " + id + " qty " + qty;
    }
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;
  @Autowired
  Orders orders;

  private HttpResponse<String> patch(String key, String form) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders/7"))
        .header("Content-Type", "application/x-www-form-urlencoded").header("Idempotency-Key", key)
        .method("PATCH", HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aKeyReusedWithAnotherFormBodyIsRefusedNotReplayed() throws Exception {
    HttpResponse<String> first = patch("k-form-1", "qty=1");
    assertEquals(200, first.statusCode(), first.body());
    assertEquals("order 7 qty 1", first.body());

    HttpResponse<String> reused = patch("k-form-1", "qty=5");
    assertEquals(422, reused.statusCode(), "the same key with another form body was answered " + reused.statusCode()
        + " (Idempotent-Replayed: " + reused.headers().firstValue("Idempotent-Replayed").orElse("-") + "): "
        + reused.body() + "; changes run: " + orders.changes);
  }
}
