package dev.idem.spring.boot.webhookform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.WebhookInbox;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A GitHub delivery with GitHub's other content type, {@code application/x-www-form-urlencoded}
 * ({@code payload=<url-encoded JSON>}), in an app that turned on Spring MVC's
 * {@code HiddenHttpMethodFilter}. That filter asks every POST for its {@code _method} parameter,
 * which makes the container parse, and so consume, a form-encoded body. The endpoint was a servlet
 * behind the app's {@code /*} filters: it read an empty body, the signature over the real one did
 * not match, and every such delivery was refused with 401 (GitHub retries it, then gives up). The
 * endpoint now reads the raw bytes ahead of those filters: the delivery is stored once, and its
 * redelivery is answered as a duplicate and stores nothing more. Both are still timed by Boot's
 * observation filter, which the endpoint's filter sits behind on purpose.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix (the first delivery got 401).
 */
@SpringBootTest(classes = FormEncodedWebhookTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.mvc.hiddenmethod.filter.enabled=true",
        "idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.enabled=false",
        "idem.webhooks.sources.github.scheme=github",
        "idem.webhooks.sources.github.secrets[0]=" + FormEncodedWebhookTest.SECRET})
class FormEncodedWebhookTest {
  static final String SECRET = "gh-form-secret";

  @SpringBootApplication
  static class App {}

  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) throws IOException {
    Path dir = Files.createTempDirectory("idem-webhook-form-");
    registry.add("idem.directory", () -> dir.resolve("idem").toString());
    registry.add("spring.datasource.url", () -> "jdbc:sqlite:" + dir.resolve("app.db"));
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;
  @Autowired
  WebhookInbox inbox;
  @Autowired
  MeterRegistry meters;

  @Test
  void aFormEncodedGitHubDeliveryIsAcceptedOnceDespiteAFilterThatReadsParameters() throws Exception {
    String json = "{\"zen\":\"Keep it logically awesome.\",\"hook_id\":42}";
    byte[] form = ("payload=" + URLEncoder.encode(json, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
    WebhookDelivery d = WebhookSigner.GITHUB.sign(SECRET, "form-delivery-1", "ping", Instant.EPOCH, form);

    HttpResponse<String> first = deliver(d);
    assertEquals(200, first.statusCode(), first.body());
    assertTrue(first.body().contains("\"accepted\""), first.body());
    assertTrue(inbox.find("github", "form-delivery-1").isPresent(), "the delivery is not in the inbox");

    // GitHub's "Redeliver": the same delivery id and signature.
    HttpResponse<String> again = deliver(d);
    assertEquals(200, again.statusCode(), again.body());
    assertTrue(again.body().contains("\"duplicate\""), again.body());
    assertEquals(1L, inbox.counts().values().stream().mapToLong(Long::longValue).sum(),
        "events in the inbox: " + inbox.counts());

    // The endpoint sits behind Boot's observation filter: both deliveries are still timed.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (timed() < 2 && System.nanoTime() < deadline) {
      Thread.sleep(10); // the observation stops after the answer went out; bounded wait for it
    }
    assertEquals(2, timed(), "POSTs timed in http.server.requests");
  }

  private long timed() {
    return meters.find("http.server.requests").tag("method", "POST").timers().stream()
        .mapToLong(Timer::count).sum();
  }

  private HttpResponse<String> deliver(WebhookDelivery d) throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/webhooks/github"))
        .POST(HttpRequest.BodyPublishers.ofByteArray(d.body()));
    d.headers().forEach((name, value) -> {
      if (!name.equalsIgnoreCase("Content-Type")) {
        b.header(name, value);
      }
    });
    b.header("Content-Type", "application/x-www-form-urlencoded");
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
