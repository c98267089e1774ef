package dev.idem.spring.boot.guardedkey;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A handler's {@link IdempotencyKey} parameter is the key the guard admitted the request under, in
 * both modes: the quoted spelling ({@code "k"}, the IETF draft's) gives the bare key, so a handler
 * that passes it on (as the README's quickstart does) keys its call the same on every retry,
 * whichever spelling the client used; a request run without a key ({@code keyRequired = false})
 * gets null.
 */
@SpringBootTest(classes = GuardedKeyArgumentTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.server.store=datasource",
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class GuardedKeyArgumentTest {
  static final Path DIR = AppDatabase.withOrders("idem-guarded-key-");

  @SpringBootApplication
  @Import(Orders.class)
  static class App {}

  @RestController
  static class Orders {
    private final JdbcTemplate jdbc;
    /** The key each handler run was given, in order ("null" for none). */
    final List<String> keys = Collections.synchronizedList(new ArrayList<>());

    Orders(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PostMapping("/tx-orders")
    @Idempotent(transactional = true)
    Map<String, Object> transactional(IdempotencyKey key, @RequestBody Map<String, Object> order) {
      keys.add(String.valueOf(key == null ? null : key.value()));
      jdbc.update("INSERT INTO orders(item) VALUES (?)", key.value());
      return Map.of("key", key.value());
    }

    @PostMapping("/optional-orders")
    @Idempotent(keyRequired = false)
    Map<String, Object> lease(IdempotencyKey key, @RequestBody Map<String, Object> order) {
      keys.add(String.valueOf(key == null ? null : key.value()));
      return Map.of("keyed", key != null);
    }
  }

  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, DIR);
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;
  @Autowired
  JdbcTemplate jdbc;
  @Autowired
  Orders orders;

  @Test
  void aTransactionalHandlerGetsTheUnquotedKeyAndItsRetryInTheOtherSpellingIsReplayed() throws Exception {
    orders.keys.clear();
    HttpResponse<String> first = post("/tx-orders", "\"k-tx-quoted\"");
    HttpResponse<String> retry = post("/tx-orders", "k-tx-quoted");

    assertEquals(200, first.statusCode(), first.body());
    assertEquals(List.of("k-tx-quoted"), orders.keys, "one run, given the key without its quotes");
    assertEquals(first.body(), retry.body(), "the bare spelling is the same key: replayed");
    assertEquals(1, jdbc.queryForObject("SELECT COUNT(*) FROM orders WHERE item = 'k-tx-quoted'", Integer.class));
  }

  @Test
  void aLeaseHandlerGetsTheKeyAndNullForARequestRunWithoutOne() throws Exception {
    orders.keys.clear();
    HttpResponse<String> keyed = post("/optional-orders", "\"k-lease-quoted\"");
    HttpResponse<String> unkeyed = post("/optional-orders", null);

    assertEquals(200, keyed.statusCode(), keyed.body());
    assertEquals(200, unkeyed.statusCode(), unkeyed.body());
    assertEquals(List.of("k-lease-quoted", "null"), orders.keys);
  }

  private HttpResponse<String> post(String path, String keyHeader) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}"));
    if (keyHeader != null) {
      b.header("Idempotency-Key", keyHeader);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
