package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The README's quickstart handler ({@code order(IdempotencyKey key, ...)}) in an app that turns the
 * guard off with {@code idem.server.enabled=false} (a profile, a test, a rollback of the guard):
 * the key argument resolver is registered by IdemServerAutoConfiguration, which that property turns
 * off, so Spring MVC falls back to its catch-all {@code @ModelAttribute} processor for the
 * parameter. That processor instantiates IdempotencyKey through its single private constructor,
 * bypassing {@code IdempotencyKey.of}, and binds its {@code value} from the request's query
 * parameters or form fields: the client writes the key the handler passes on to its charge, a key
 * that {@code IdempotencyKey.of} refuses included (a comma, a space, 300 characters).
 *
 * <p>Expected (docs/spring.md, Idempotent's javadoc): null for a request that ran without a claim.
 * Actual: a key made from the query string.
 */
@SpringBootTest(classes = GuardedKeyServerDisabledReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.server.enabled=false", "idem.client.enabled=false", "idem.outbox.enabled=false"})
class GuardedKeyServerDisabledReviewTest {
  @SpringBootApplication
  @Import(Orders.class)
  static class App {}

  @RestController
  static class Orders {
    final List<String> keys = Collections.synchronizedList(new ArrayList<>());

    @PostMapping("/orders")
    @Idempotent
    String order(IdempotencyKey key, @RequestBody String order) {
      keys.add(key == null ? "null" : "[" + key.value() + "]");
      return "ok";
    }
  }

  @DynamicPropertySource
  static void dir(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, AppDatabase.withOrders("idem-key-disabled-"));
  }

  @LocalServerPort
  int port;
  @Autowired
  Orders orders;

  @Test
  void withTheGuardOffTheKeyParameterIsNullNotBoundFromTheQueryString() throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/orders?value=not%20a,key"))
        .header("Content-Type", "text/plain").header("Idempotency-Key", "k-1")
        .POST(HttpRequest.BodyPublishers.ofString("book")).build(), HttpResponse.BodyHandlers.ofString());

    assertEquals(200, r.statusCode(), r.body());
    assertEquals(List.of("null"), orders.keys, "the handler's key, with idem.server.enabled=false");
  }
}
