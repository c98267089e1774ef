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
import java.nio.file.Path;
import java.util.Arrays;
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
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A transactional handler's {@code setLocale} gives its answer the charset the container maps the
 * locale to (Spring Boot's Tomcat maps fr to UTF-8), as the same handler gets unguarded: the
 * Content-Type names it, first and on the replay, and the writer writes in it (a euro sign, which
 * ISO-8859-1, the writer's default, cannot hold).
 */
@SpringBootTest(classes = TransactionalLocaleCharsetTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.server.store=datasource",
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class TransactionalLocaleCharsetTest {
  static final Path DIR = AppDatabase.withOrders("idem-tx-locale-charset-");

  @SpringBootApplication
  @Import(Prices.class)
  static class App {}

  @RestController
  static class Prices {
    private final JdbcTemplate jdbc;

    Prices(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PostMapping("/tx-price")
    @Idempotent(transactional = true)
    void guarded(HttpServletResponse response) throws IOException {
      jdbc.update("INSERT INTO orders(item) VALUES (?)", "price");
      answer(response);
    }

    @PostMapping("/plain-price")
    void plain(HttpServletResponse response) throws IOException {
      answer(response);
    }

    private static void answer(HttpServletResponse response) throws IOException {
      response.setStatus(201);
      response.setLocale(Locale.FRANCE);
      response.setContentType("text/plain");
      response.getWriter().write("12 €");
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
  void theGuardedAnswerAndItsReplayAreInTheCharsetTheContainerMapsTheLocaleTo() throws Exception {
    HttpResponse<byte[]> plain = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/plain-price"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofByteArray());
    HttpRequest keyed = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/tx-price"))
        .header("Idempotency-Key", "k-price").POST(HttpRequest.BodyPublishers.noBody()).build();
    HttpResponse<byte[]> guarded = HTTP.send(keyed, HttpResponse.BodyHandlers.ofByteArray());
    HttpResponse<byte[]> replay = HTTP.send(keyed, HttpResponse.BodyHandlers.ofByteArray());

    Optional<String> type = plain.headers().firstValue("Content-Type");
    assertEquals(Optional.of("text/plain;charset=UTF-8"), type, "the container's own answer");
    assertEquals(Optional.of("true"), replay.headers().firstValue("Idempotent-Replayed"));
    assertEquals(type, guarded.headers().firstValue("Content-Type"), "the first answer");
    assertEquals(type, replay.headers().firstValue("Content-Type"), "the replay");
    List<Byte> body = bytes(plain.body());
    assertEquals(body, bytes(guarded.body()), "the first answer's text, as the container encodes it");
    assertEquals(body, bytes(replay.body()), "the replay's text");
  }

  private static List<Byte> bytes(byte[] b) {
    Byte[] boxed = new Byte[b.length];
    Arrays.setAll(boxed, i -> b[i]);
    return List.of(boxed);
  }
}
