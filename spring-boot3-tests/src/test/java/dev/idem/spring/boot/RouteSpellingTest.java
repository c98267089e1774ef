package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A route named in idem.server.routes is guarded however the request spells its path: Spring MVC
 * runs the /payments handler for /pay%6Dents and for /payments;v=1 (it matches on the decoded path
 * without path parameters), so the guard must see those requests too, or a retried keyed payment
 * runs twice.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
@SpringBootTest(classes = TestApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "idem.server.store=datasource",
    "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
    "idem.server.routes=POST /payments",
    "idem.outbox.enabled=false"})
class RouteSpellingTest {
  static final Path DIR;

  static {
    try {
      DIR = Files.createTempDirectory("idem-routes-");
      try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + DIR.resolve("app.db"));
           Statement st = c.createStatement()) {
        st.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL)");
        st.execute("CREATE TABLE payments (id INTEGER PRIMARY KEY, amount TEXT NOT NULL)");
      }
    } catch (Exception e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    registry.add("idem.directory", () -> DIR.resolve("idem").toString());
    registry.add("spring.datasource.url", () -> "jdbc:sqlite:" + DIR.resolve("app.db"));
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;
  @Autowired
  JdbcTemplate jdbc;

  @Test
  void thePlainPathIsGuarded() throws Exception {
    assertEquals(1, paymentsAfterTwoSends("/payments", "10"));
  }

  @Test
  void anEncodedSpellingOfTheSamePathIsGuarded() throws Exception {
    assertEquals(1, paymentsAfterTwoSends("/pay%6Dents", "20"));
  }

  @Test
  void aPathParameterOnTheSamePathIsGuarded() throws Exception {
    assertEquals(1, paymentsAfterTwoSends("/payments;v=1", "30"));
  }

  /** Sends the same keyed payment twice (a client's retry) and counts the rows its handler wrote. */
  private long paymentsAfterTwoSends(String path, String amount) throws Exception {
    String key = UUID.randomUUID().toString();
    for (int i = 0; i < 2; i++) {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
          .header("Content-Type", "application/json").header("Idempotency-Key", key)
          .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":\"" + amount + "\"}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(201, r.statusCode(), path + " -> " + r.body());
    }
    return jdbc.queryForObject("SELECT COUNT(*) FROM payments WHERE amount = ?", Long.class, amount);
  }
}
