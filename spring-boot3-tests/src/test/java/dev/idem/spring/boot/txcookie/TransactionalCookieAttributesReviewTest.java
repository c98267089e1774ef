package dev.idem.spring.boot.txcookie;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
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
 * Review: a transactional handler ({@code @Idempotent(transactional = true)}) is given the starter's
 * {@code BufferedResponse}, whose {@code addCookie} renders {@code Set-Cookie} by hand from name,
 * value, Path, Max-Age, Secure and HttpOnly only. A cookie's {@code Domain} and its Servlet 6
 * attributes ({@code SameSite}, set with {@code Cookie.setAttribute}) are dropped, so the client of
 * the guarded route gets another cookie than the container sends for the same handler unguarded: a
 * host-only cookie instead of one for the parent domain (the session is lost on the sibling hosts),
 * and no {@code SameSite=None} (browsers then apply Lax and drop it on cross-site requests).
 * The lease-mode filter hands {@code addCookie} to the container and is not affected.
 *
 * <p>Deterministic: the same handler body runs guarded (transactional) and unguarded on one Tomcat,
 * and the two {@code Set-Cookie} values are compared.
 */
@SpringBootTest(classes = TransactionalCookieAttributesReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.server.store=datasource",
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class TransactionalCookieAttributesReviewTest {
  static final Path DIR = AppDatabase.withOrders("idem-tx-cookie-");

  @SpringBootApplication
  @Import(Sessions.class)
  static class App {}

  @RestController
  static class Sessions {
    private final JdbcTemplate jdbc;

    Sessions(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PostMapping("/tx-cookie")
    @Idempotent(transactional = true)
    void guarded(HttpServletResponse response) {
      jdbc.update("INSERT INTO orders(item) VALUES (?)", "cookie");
      answer(response);
    }

    @PostMapping("/plain-cookie")
    void plain(HttpServletResponse response) {
      answer(response);
    }

    private static void answer(HttpServletResponse response) {
      Cookie session = new Cookie("sid", "abc123");
      session.setDomain("example.com");
      session.setPath("/");
      session.setSecure(true);
      session.setHttpOnly(true);
      session.setAttribute("SameSite", "None");
      response.addCookie(session);
      response.setStatus(201);
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
  void theGuardedAnswerCarriesTheSameCookieAsTheUnguardedOne() throws Exception {
    HttpResponse<String> plain = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/plain-cookie"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> guarded = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/tx-cookie"))
        .header("Idempotency-Key", "k-cookie").POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());

    assertEquals(201, plain.statusCode());
    assertEquals(201, guarded.statusCode());
    List<String> expected = plain.headers().allValues("Set-Cookie");
    assertEquals(expected, guarded.headers().allValues("Set-Cookie"),
        "the transactional route's cookie lost attributes the container sends for the same handler unguarded");
  }
}
