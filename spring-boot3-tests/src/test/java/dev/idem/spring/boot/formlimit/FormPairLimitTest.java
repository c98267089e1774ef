package dev.idem.spring.boot.formlimit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
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
 * A keyed form POST the guard reads itself gets its parameters from the guard's parse, which the
 * container's parameter limit never sees: the guard keeps one of its own
 * (IdempotencyFilter.MAX_FORM_PAIRS, 1000), in lease mode (the filter) and in transactional mode
 * (the starter's TransactionalGuard), and refuses a larger form 400 before anything runs.
 */
@SpringBootTest(classes = FormPairLimitTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.store=datasource"})
class FormPairLimitTest {
  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, AppDatabase.withOrders("idem-form-limit-"));
  }

  @SpringBootApplication
  @Import(Orders.class)
  static class App {}

  @RestController
  static class Orders {
    final AtomicInteger runs = new AtomicInteger();

    @PostMapping("/orders")
    @Idempotent
    String order(@RequestParam String k0) {
      return "run " + runs.incrementAndGet();
    }

    @PostMapping("/tx-orders")
    @Idempotent(transactional = true)
    String txOrder(@RequestParam String k0) {
      return "run " + runs.incrementAndGet();
    }
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;

  @Autowired
  Orders orders;

  private HttpResponse<String> post(String path, int pairs, String key) throws Exception {
    StringBuilder form = new StringBuilder();
    for (int i = 0; i < pairs; i++) {
      form.append(i == 0 ? "" : "&").append('k').append(i).append("=v");
    }
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Content-Type", "application/x-www-form-urlencoded").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(form.toString())).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aKeyedFormOverThePairLimitIsRefusedBeforeItRunsInEitherMode() throws Exception {
    for (String path : new String[] {"/orders", "/tx-orders"}) {
      int before = orders.runs.get();
      HttpResponse<String> over = post(path, 1001, "k-over" + path);
      HttpResponse<String> atLimit = post(path, 1000, "k-at" + path);
      String seen = path + ": 1001 pairs " + over.statusCode() + " '" + over.body() + "', 1000 pairs "
          + atLimit.statusCode() + " '" + atLimit.body() + "'";
      assertEquals(400, over.statusCode(), seen);
      assertEquals(200, atLimit.statusCode(), seen);
      assertEquals(before + 1, orders.runs.get(), "only the form within the limit ran: " + seen);
      HttpResponse<String> overAgain = post(path, 1001, "k-over" + path);
      assertEquals(400, overAgain.statusCode(), "nothing was claimed; refused again, not in flight: " + seen);
    }
  }
}
