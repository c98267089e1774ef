package dev.idem.spring.boot.classmark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code @Idempotent} on a controller class guards the class's handlers for unsafe methods (POST,
 * PUT, PATCH, DELETE) only: a keyed GET to one of its GET handlers reads fresh data every time and
 * leaves no record (else it would be answered a stale copy for the retention, and, under an
 * {@code operation} name, a GET reusing a POST's key would be refused as a reuse). A GET handler
 * marked itself is still guarded. The guard's records are in the app's database, so that they can
 * be counted.
 */
class ClassMarkSafeMethodsTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @TempDir
  Path dir;
  private ConfigurableApplicationContext app;
  private String base;
  private JdbcTemplate jdbc;
  private Prices prices;

  @BeforeEach
  void start() {
    app = new SpringApplicationBuilder(App.class).properties(
        "server.port=0",
        "idem.directory=" + dir.resolve("idem"),
        "idem.server.store=datasource",
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.client.enabled=false",
        "idem.outbox.enabled=false").run();
    base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
    jdbc = app.getBean(JdbcTemplate.class);
    prices = app.getBean(Prices.class);
  }

  @AfterEach
  void stop() {
    app.close();
  }

  @Test
  void aKeyedGetToAClassMarkedControllerReadsFreshDataAndStoresNothing() throws Exception {
    prices.price.set(10);
    HttpResponse<String> first = get("/price", "read-1");
    prices.price.set(12);
    HttpResponse<String> again = get("/price", "read-1");

    assertEquals("price 10", first.body());
    assertEquals("price 12", again.body(), "the GET with the same key read the data as it is now, not a stored copy");
    assertEquals("no", again.headers().firstValue("Idempotent-Replayed").orElse("no"));
    assertEquals(2, prices.reads.get(), "the GET handler ran for each request");
    assertEquals(0, records(), "a GET the class's mark does not guard leaves no record");
  }

  @Test
  void aGetReusingAPostsKeyIsNotTakenForItsReuse() throws Exception {
    HttpResponse<String> set = post("/price", "set-1", "15");
    HttpResponse<String> read = get("/price", "set-1");
    HttpResponse<String> retry = post("/price", "set-1", "15");

    assertEquals(200, set.statusCode(), set.body());
    assertEquals(200, read.statusCode(), read.body());
    assertEquals("price 15", read.body());
    assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse("no"),
        "the class's mark still guards its POST handler");
    assertEquals(1, prices.writes.get(), "the POST's effect, once for its key");
    assertEquals(1, records(), "the POST's record only");
  }

  @Test
  void aGetHandlerMarkedItselfIsStillGuarded() throws Exception {
    HttpResponse<String> first = get("/quote", "quote-1");
    HttpResponse<String> retry = get("/quote", "quote-1");

    assertEquals("quote 1", first.body());
    assertEquals("quote 1", retry.body(), "the retry gets the stored answer");
    assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse("no"));
    assertEquals(1, prices.quotes.get());
    assertEquals(1, records());
  }

  private HttpResponse<String> get(String path, String key) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).header("Idempotency-Key", key).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> post(String path, String key, String body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).header("Idempotency-Key", key)
        .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private int records() {
    return jdbc.queryForObject("SELECT COUNT(*) FROM idem_server_record", Integer.class);
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Prices.class)
  static class App {}

  @RestController
  @Idempotent
  static class Prices {
    final AtomicInteger price = new AtomicInteger();
    final AtomicInteger reads = new AtomicInteger();
    final AtomicInteger writes = new AtomicInteger();
    final AtomicInteger quotes = new AtomicInteger();

    @GetMapping("/price")
    String price() {
      reads.incrementAndGet();
      return "price " + price.get();
    }

    @PostMapping("/price")
    String setPrice(@RequestBody String value) {
      writes.incrementAndGet();
      price.set(Integer.parseInt(value.trim()));
      return "set " + value;
    }

    @GetMapping("/quote")
    @Idempotent
    String quote() {
      return "quote " + quotes.incrementAndGet();
    }
  }
}
