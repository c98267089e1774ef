package dev.idem.examples.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.testkit.IdempotentServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The README's Spring quickstart, copied as written, with a client that spells its key as the IETF
 * draft does: {@code Idempotency-Key: "8e03978e-..."} (an RFC 8941 string; Idem's own clients send
 * it so with {@code idem.client.key-format=structured-string}). The guard reads both spellings as
 * the same key ({@code KeyHeader}) and admits the request; the handler then takes the raw header
 * through {@code @RequestHeader("Idempotency-Key")}, quotes included, and
 * {@code IdempotencyKey.of("\"8e03...\"")} throws: every such order is answered 500 and nothing is
 * charged, on the first try and on every retry.
 *
 * <p>Expected: the quoted spelling of a key is an order like the bare one (200, one charge under
 * the key). Actual: 500 from the handler's {@code IllegalArgumentException}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class QuotedOrderKeyReviewTest {
  private static final IdempotentServer PROVIDER = IdempotentServer.start();
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @DynamicPropertySource
  static void properties(DynamicPropertyRegistry registry) throws Exception {
    Path dir = Files.createTempDirectory("idem-shop-quoted-");
    registry.add("idem.directory", () -> dir.toString());
    registry.add("shop.payments-url", () -> PROVIDER.url("/").toString());
    registry.add("PAYMENTS_WEBHOOK_SECRET", () -> "whsec-sample-secret-of-the-test");
  }

  @AfterAll
  static void stopProvider() {
    PROVIDER.close();
  }

  @LocalServerPort
  int port;

  @Test
  void anOrderWhoseKeyIsSpelledAsTheDraftsQuotedStringIsChargedOnce() throws Exception {
    String key = IdempotencyKey.generate().value();
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/orders"))
        .header("Content-Type", "application/json").header("Idempotency-Key", "\"" + key + "\"")
        .timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\",\"amount\":42}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), "the quoted key (the draft's spelling, which the guard accepts): " + r.body());
    assertEquals(1, PROVIDER.effectCount(key), "one charge under the order's key");
  }
}
