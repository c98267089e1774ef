package dev.idem.examples.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSender;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.InboxEntry;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.WebhookInbox;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The sample app as its README section says it behaves, on a random port, with the test kit's
 * reference server as the payment provider: effects are counted per key at the provider, and
 * webhook events in the app's inbox.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ShopApplicationTest {
  private static final String SECRET = "whsec-sample-secret-of-the-test";
  private static final IdempotentServer PROVIDER = IdempotentServer.start();
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @DynamicPropertySource
  static void properties(DynamicPropertyRegistry registry) throws Exception {
    Path dir = Files.createTempDirectory("idem-shop-");
    registry.add("idem.directory", () -> dir.toString());
    registry.add("shop.payments-url", () -> PROVIDER.url("/").toString());
    registry.add("PAYMENTS_WEBHOOK_SECRET", () -> SECRET);
  }

  @AfterAll
  static void stopProvider() {
    PROVIDER.close();
  }

  @LocalServerPort
  int port;
  @Autowired
  WebhookInbox inbox;
  @Autowired
  IdempotentExecutor executor;

  @Test
  void aRetriedOrderIsAnsweredFromTheGuardAndChargesOnce() throws Exception {
    String key = IdempotencyKey.generate().value();
    HttpResponse<String> first = order(key);
    HttpResponse<String> again = order(key);
    assertEquals(200, first.statusCode(), first.body());
    assertEquals(first.body(), again.body());
    assertEquals(Optional.of("true"), again.headers().firstValue("Idempotent-Replayed"));
    assertEquals(1, PROVIDER.effectCount(key), "one charge for the order's key");
    assertEquals(List.of(key), keysAtTheProvider(key), "one request, under the order's key");
  }

  @Test
  void aChargeWhoseResponseWasLostIsRetriedUnderTheSameKey() throws Exception {
    String key = IdempotencyKey.generate().value();
    PROVIDER.plan().forKey(key, Fault.commitThenDropResponse());
    HttpResponse<String> r = order(key);
    assertEquals(200, r.statusCode(), r.body());
    assertEquals(1, PROVIDER.effectCount(key));
    assertEquals(List.of(key, key), keysAtTheProvider(key), "the lost attempt and its retry, one key");
  }

  /**
   * Every attempt of the charge loses its response: the charge is UNCERTAIN and the order fails,
   * so the guard lets the order run again. The second run's charge has the order's key, which the
   * journal knows as UNCERTAIN: it is refused (for reconciliation) instead of charging again under
   * a new key.
   */
  @Test
  void anOrderRunAgainAfterAnUncertainChargeDoesNotChargeTwice() throws Exception {
    String key = IdempotencyKey.generate().value();
    long before = PROVIDER.totalEffects();
    PROVIDER.plan().forKey(key, 3, Fault.commitThenDropResponse());
    HttpResponse<String> failed = order(key);
    assertEquals(500, failed.statusCode(), failed.body());
    HttpResponse<String> again = order(key);
    assertEquals(500, again.statusCode(), "run again, and refused: " + again.body());
    assertEquals(1, PROVIDER.effectCount(key));
    assertEquals(1, PROVIDER.totalEffects() - before, "no charge under another key");
    assertEquals(List.of(key, key, key), keysAtTheProvider(key), "three attempts, none from the second run");
    OperationRecord charge = executor.find(new OperationId("default", "charge", IdempotencyKey.of(key))).orElseThrow();
    assertEquals(OperationState.UNCERTAIN, charge.state());
  }

  @Test
  void aWebhookIsVerifiedStoredAndHandledOnceHoweverOftenItIsDelivered() throws Exception {
    WebhookSender sender = WebhookSender.to(app("/webhooks/payments"), WebhookSigner.STRIPE, SECRET).build();
    String id = "evt_" + IdempotencyKey.generate().value();
    WebhookDelivery d = sender.sign(id, "charge.succeeded",
        WebhookSigner.jsonEvent(id, "charge.succeeded", "{\"amount\":42}"));
    assertEquals(2, sender.send(d) / 100);
    assertEquals(2, sender.send(d) / 100, "a redelivery is acknowledged");
    WebhookDelivery forged = sender.withSecret("not-the-secret").sign("evt_forged", "charge.succeeded",
        WebhookSigner.jsonEvent("evt_forged", "charge.succeeded", "{\"amount\":1000}"));
    assertEquals(4, sender.send(forged) / 100, "a forged delivery is refused");

    InboxEntry entry = awaitDone(id);
    assertEquals(1, entry.runs(), "handled once: " + entry);
    assertTrue(inbox.find("payments", "evt_forged").isEmpty(), "nothing stored for the forged delivery");
  }

  private HttpResponse<String> order(String key) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(app("/orders")).header("Content-Type", "application/json")
        .header("Idempotency-Key", key).timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\",\"amount\":42}")).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static List<String> keysAtTheProvider(String key) {
    return PROVIDER.recordedRequests().stream().map(r -> r.header("Idempotency-Key").orElse("none"))
        .filter(key::equals).toList();
  }

  private InboxEntry awaitDone(String id) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      Optional<InboxEntry> e = inbox.find("payments", id);
      if (e.isPresent() && e.get().state() == InboxState.DONE) {
        return e.get();
      }
      assertTrue(System.nanoTime() < deadline, "not handled within 20 s: " + e);
      Thread.sleep(20); // the processor runs on its own threads: a bounded wait for them
    }
  }

  private URI app(String path) {
    return URI.create("http://localhost:" + port + path);
  }
}
