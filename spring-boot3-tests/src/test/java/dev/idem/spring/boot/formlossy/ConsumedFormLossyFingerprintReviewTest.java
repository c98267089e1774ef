package dev.idem.spring.boot.formlossy;

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
 * A form POST whose body a filter ahead of the guard consumed (here Boot's HiddenHttpMethodFilter,
 * {@code spring.mvc.hiddenmethod.filter.enabled=true}, which reads {@code _method}; Spring
 * Security's CSRF check does the same) is fingerprinted by FormBody.canonical of the parameters the
 * container parsed. Those are not the body: Tomcat drops a pair it cannot decode (an unescaped
 * {@code %}, as {@code curl -d 'note=50%off'} sends), so two different bodies give the same
 * parameters and one fingerprint. The docs promise "a key reused with another form is still refused
 * 422"; here it is replayed as the first form's answer, and the second form is silently dropped.
 *
 * <p>Expected (the fix): a keyed form Tomcat could not decode in full is refused 400, neither run
 * nor replayed; an intact form reused with another still gets 422. Before: 200, the first answer
 * replayed.
 */
@SpringBootTest(classes = ConsumedFormLossyFingerprintReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.store=datasource",
        "spring.mvc.hiddenmethod.filter.enabled=true"})
class ConsumedFormLossyFingerprintReviewTest {
  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, AppDatabase.withOrders("idem-form-lossy-"));
  }

  @SpringBootApplication
  @Import(Notes.class)
  static class App {}

  @RestController
  static class Notes {
    final java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();

    @PostMapping("/notes")
    @Idempotent
    String note(@RequestParam(required = false) String note) {
      return "note " + note + " run " + runs.incrementAndGet();
    }
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;

  @org.springframework.beans.factory.annotation.Autowired
  Notes notes;

  private HttpResponse<String> post(String form, String key) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/notes"))
        .header("Content-Type", "application/x-www-form-urlencoded").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aKeyReusedWithAnotherConsumedFormIsRefused() throws Exception {
    HttpResponse<String> first = post("note=50%off", "k-lossy-1");
    HttpResponse<String> other = post("note=90%off", "k-lossy-1");
    String seen = "first " + first.statusCode() + " '" + first.body() + "' " + first.headers().map()
        + ", other form with the same key " + other.statusCode() + " '" + other.body() + "' "
        + other.headers().firstValue(dev.idem.server.IdempotencyGuard.REPLAYED_HEADER).orElse("(not replayed)");
    // The fix: Tomcat reports (parameter_parse_failed) that it dropped a pair, so the guard cannot
    // tell the form from another and refuses it under a key (400) rather than replay another's answer.
    assertEquals(400, first.statusCode(), seen);
    assertEquals(400, other.statusCode(), seen);
    assertEquals("(not replayed)",
        other.headers().firstValue(dev.idem.server.IdempotencyGuard.REPLAYED_HEADER).orElse("(not replayed)"), seen);
    assertEquals(0, notes.runs.get(), seen);
    HttpResponse<String> intact = post("note=50%25off", "k-lossy-2");
    HttpResponse<String> reused = post("note=90%25off", "k-lossy-2");
    seen = "intact " + intact.statusCode() + " '" + intact.body() + "', reused " + reused.statusCode();
    assertEquals(200, intact.statusCode(), seen);
    assertEquals("note 50%off run 1", intact.body(), seen);
    assertEquals(422, reused.statusCode(), seen);
    assertEquals(1, notes.runs.get(), seen);
  }
}
