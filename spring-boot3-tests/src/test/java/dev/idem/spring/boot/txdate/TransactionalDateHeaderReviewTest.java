package dev.idem.spring.boot.txdate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Review: the starter's {@code BufferedResponse} (a transactional handler's response) formats
 * {@code setDateHeader} with {@code DateTimeFormatter.RFC_1123_DATE_TIME}, which writes a day of
 * month below 10 with one digit ({@code Sat, 1 Feb 2025 10:00:00 GMT}). HTTP senders must write
 * IMF-fixdate (RFC 9110 section 5.6.7: {@code day = 2DIGIT}), as Tomcat does for the same handler
 * unguarded ({@code Sat, 01 Feb 2025 10:00:00 GMT}); strict parsers (Go's {@code http.ParseTime})
 * refuse the one-digit form. {@code Last-Modified} is on the guard's default replay allowlist, so
 * the malformed date is stored and replayed for the whole retention.
 *
 * <p>Deterministic: a fixed date, the same handler body guarded (transactional) and unguarded.
 */
@SpringBootTest(classes = TransactionalDateHeaderReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.server.store=datasource",
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class TransactionalDateHeaderReviewTest {
  static final Path DIR = AppDatabase.withOrders("idem-tx-date-");
  static final long FEB_1 = Instant.parse("2025-02-01T10:00:00Z").toEpochMilli();

  @SpringBootApplication
  @Import(Documents.class)
  static class App {}

  @RestController
  static class Documents {
    private final JdbcTemplate jdbc;

    Documents(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PostMapping("/tx-date")
    @Idempotent(transactional = true)
    void guarded(HttpServletResponse response) {
      jdbc.update("INSERT INTO orders(item) VALUES (?)", "date");
      answer(response);
    }

    @PostMapping("/plain-date")
    void plain(HttpServletResponse response) {
      answer(response);
    }

    private static void answer(HttpServletResponse response) {
      response.setStatus(201);
      response.setDateHeader("Last-Modified", FEB_1);
    }
  }

  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, DIR);
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;

  @Test
  void theGuardedAnswerAndItsReplayCarryTheDateAsTheContainerWritesIt() throws Exception {
    HttpResponse<String> plain = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/plain-date"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    HttpRequest keyed = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/tx-date"))
        .header("Idempotency-Key", "k-date").POST(HttpRequest.BodyPublishers.noBody()).build();
    HttpResponse<String> guarded = HTTP.send(keyed, HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> replay = HTTP.send(keyed, HttpResponse.BodyHandlers.ofString());

    Optional<String> expected = plain.headers().firstValue("Last-Modified");
    assertEquals(Optional.of("Sat, 01 Feb 2025 10:00:00 GMT"), expected, "the container's IMF-fixdate");
    assertEquals(201, guarded.statusCode());
    assertEquals(Optional.of("true"), replay.headers().firstValue("Idempotent-Replayed"));
    assertEquals(expected, guarded.headers().firstValue("Last-Modified"), "the transactional route's first answer");
    assertEquals(expected, replay.headers().firstValue("Last-Modified"), "the replay");
  }
}
