package dev.idem.spring.boot.txlocale;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
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
 * Review: the starter's {@code BufferedResponse}, which a transactional handler
 * ({@code @Idempotent(transactional = true)}) writes to, makes {@code setLocale} a no-op. The
 * container's {@code setLocale} sends {@code Content-Language} (Tomcat: {@code fr-FR}); the guarded
 * route sends none, first and on every replay, though {@code Content-Language} is on the guard's
 * default replay allowlist (docs/server.md) and the lease-mode filter passes {@code setLocale} on.
 * A localized answer (a Spring view rendered for the request's locale, an error text in the
 * caller's language) is then labelled with no language.
 *
 * <p>Deterministic: the same handler body runs unguarded and guarded (transactional) on one Tomcat.
 */
@SpringBootTest(classes = TransactionalLocaleReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.server.store=datasource",
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class TransactionalLocaleReviewTest {
  static final Path DIR = AppDatabase.withOrders("idem-tx-locale-");

  @SpringBootApplication
  @Import(Greetings.class)
  static class App {}

  @RestController
  static class Greetings {
    private final JdbcTemplate jdbc;

    Greetings(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PostMapping("/tx-locale")
    @Idempotent(transactional = true)
    void guarded(HttpServletResponse response) throws IOException {
      jdbc.update("INSERT INTO orders(item) VALUES (?)", "locale");
      answer(response);
    }

    @PostMapping("/plain-locale")
    void plain(HttpServletResponse response) throws IOException {
      answer(response);
    }

    private static void answer(HttpServletResponse response) throws IOException {
      response.setStatus(201);
      response.setLocale(Locale.FRANCE);
      response.setContentType("application/json");
      response.getOutputStream().write("{\"message\":\"commande créée\"}".getBytes(StandardCharsets.UTF_8));
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
  void theGuardedAnswerAndItsReplayNameTheLanguageTheContainerNames() throws Exception {
    HttpResponse<String> plain = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/plain-locale"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    HttpRequest keyed = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/tx-locale"))
        .header("Idempotency-Key", "k-locale").POST(HttpRequest.BodyPublishers.noBody()).build();
    HttpResponse<String> guarded = HTTP.send(keyed, HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> replay = HTTP.send(keyed, HttpResponse.BodyHandlers.ofString());

    Optional<String> expected = plain.headers().firstValue("Content-Language");
    assertEquals(Optional.of("fr-FR"), expected, "the container's own answer");
    assertEquals(201, guarded.statusCode());
    assertEquals(Optional.of("true"), replay.headers().firstValue("Idempotent-Replayed"));
    assertEquals(expected, guarded.headers().firstValue("Content-Language"),
        "the transactional route's first answer lost the Content-Language its setLocale set");
    assertEquals(expected, replay.headers().firstValue("Content-Language"),
        "the replay lost the Content-Language its setLocale set");
  }
}
