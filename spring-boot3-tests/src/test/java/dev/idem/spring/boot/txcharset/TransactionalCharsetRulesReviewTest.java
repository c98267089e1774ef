package dev.idem.spring.boot.txcharset;

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
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Review (round2bufresp): the same handler answered unguarded (Tomcat, the baseline), guarded in
 * transactional mode, and replayed must carry the same Content-Type, Content-Language and bytes.
 */
@SpringBootTest(classes = TransactionalCharsetRulesReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.server.store=datasource",
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class TransactionalCharsetRulesReviewTest {
  static final Path DIR = AppDatabase.withOrders("idem-tx-charset-rules-");

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
      answer(kind, response);
    }

    @PostMapping("/plain/{kind}")
    void plain(@PathVariable String kind, HttpServletResponse response) throws IOException {
      answer(kind, response);
    }

    private static void answer(String kind, HttpServletResponse response) throws IOException {
      response.setStatus(201);
      switch (kind) {
        case "header-type" -> {
          // The type, charset included, set as a header: Tomcat takes it as setContentType.
          response.setHeader("Content-Type", "text/plain;charset=UTF-8");
          response.getWriter().write("12 €");
        }
        case "type-after-writer" -> {
          // After getWriter the charset is fixed (ISO-8859-1): Tomcat ignores the type's charset.
          response.getWriter().write("{\"price\":\"12\"}");
          response.setContentType("application/json;charset=UTF-8");
        }
        case "locale-reset" -> {
          response.setLocale(Locale.FRANCE);
          response.reset();
          response.setStatus(201);
          response.setContentType("application/octet-stream");
          response.getOutputStream().write(new byte[] {1, 2, 3});
        }
        case "locale-header-type" -> {
          response.setLocale(Locale.FRANCE);
          response.setHeader("Content-Type", "image/png");
          response.getOutputStream().write(new byte[] {1, 2, 3});
        }
        default -> throw new IllegalArgumentException(kind);
      }
    }
  }

  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, DIR);
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;

  /** setHeader("Content-Type", "...;charset=UTF-8") then getWriter: the held writer ignores the charset. */
  @Test
  void aContentTypeHeaderNamesTheWritersCharset() throws Exception {
    sameAnswers("header-type");
  }

  /** getWriter then setContentType("...;charset=UTF-8"): the held type names a charset the body is not in. */
  @Test
  void aCharsetAfterGetWriterIsIgnoredAsTomcatIgnoresIt() throws Exception {
    sameAnswers("type-after-writer");
  }

  /** setLocale then reset(): the locale passed to the container's response stays there. */
  @Test
  void resetForgetsTheLocaleAndItsCharset() throws Exception {
    sameAnswers("locale-reset");
  }

  /** setLocale then a Content-Type header: the first answer gets the container's charset, the replay not. */
  @Test
  void theReplayHasTheFirstAnswersContentTypeAfterSetLocale() throws Exception {
    sameAnswers("locale-header-type");
  }

  private void sameAnswers(String kind) throws Exception {
    HttpResponse<byte[]> plain = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/plain/" + kind))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofByteArray());
    HttpRequest keyed = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/tx/" + kind))
        .header("Idempotency-Key", "k-" + kind).POST(HttpRequest.BodyPublishers.noBody()).build();
    HttpResponse<byte[]> guarded = HTTP.send(keyed, HttpResponse.BodyHandlers.ofByteArray());
    HttpResponse<byte[]> replay = HTTP.send(keyed, HttpResponse.BodyHandlers.ofByteArray());

    assertEquals(201, plain.statusCode());
    assertEquals(Optional.of("true"), replay.headers().firstValue("Idempotent-Replayed"));
    assertEquals(bytes(plain.body()), bytes(guarded.body()), "the first answer's bytes");
    assertEquals(bytes(plain.body()), bytes(replay.body()), "the replay's bytes");
    for (String h : List.of("Content-Type", "Content-Language")) {
      Optional<String> want = plain.headers().firstValue(h);
      assertEquals(want, guarded.headers().firstValue(h), h + " of the first answer (unguarded: " + want + ")");
      assertEquals(want, replay.headers().firstValue(h), h + " of the replay (unguarded: " + want + ")");
    }
  }

  private static List<Byte> bytes(byte[] b) {
    Byte[] boxed = new Byte[b.length];
    Arrays.setAll(boxed, i -> b[i]);
    return List.of(boxed);
  }
}
