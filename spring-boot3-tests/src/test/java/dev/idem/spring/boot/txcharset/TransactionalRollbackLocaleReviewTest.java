package dev.idem.spring.boot.txcharset;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
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
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Review (round2bufresp): when the run rolls back (here: the answer is over the buffer's limit),
 * the client gets the guard's own 500, which is not the handler's answer: it must not carry what the
 * handler set on its answer (its Content-Language, the charset its locale maps to, its cookies).
 * The same handler without setLocale gets the baseline 500.
 */
@SpringBootTest(classes = TransactionalRollbackLocaleReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.server.store=datasource", "idem.server.max-buffered-body-bytes=64",
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class TransactionalRollbackLocaleReviewTest {
  static final Path DIR = AppDatabase.withOrders("idem-tx-rollback-locale-");

  @SpringBootApplication
  @Import(Answers.class)
  static class App {}

  @RestController
  static class Answers {
    private final JdbcTemplate jdbc;

    Answers(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PostMapping("/tx/{kind}")
    @Idempotent(transactional = true)
    void guarded(@PathVariable String kind, HttpServletResponse response) throws IOException {
      jdbc.update("INSERT INTO orders(item) VALUES (?)", kind);
      response.addCookie(new Cookie("session", "s-" + kind));
      if (kind.equals("locale")) {
        response.setLocale(Locale.FRANCE);
      }
      response.getOutputStream().write(new byte[200]);
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
  void theGuardsOwn500CarriesNothingOfTheRolledBackHandlersLocale() throws Exception {
    HttpResponse<byte[]> baseline = post("none");
    HttpResponse<byte[]> withLocale = post("locale");

    assertEquals(500, baseline.statusCode());
    assertEquals(500, withLocale.statusCode());
    for (String h : List.of("Set-Cookie", "Content-Language", "Content-Type")) {
      Optional<String> want = baseline.headers().firstValue(h);
      assertEquals(want, withLocale.headers().firstValue(h), h + " of the guard's 500 (without setLocale: " + want + ")");
    }
  }

  private HttpResponse<byte[]> post(String kind) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/tx/" + kind))
        .header("Idempotency-Key", "k-" + kind).POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }
}
