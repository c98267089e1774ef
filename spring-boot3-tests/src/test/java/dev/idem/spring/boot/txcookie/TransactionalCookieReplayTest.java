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
 * A transactional handler's cookies and {@code Set-Cookie} headers go out after the commit in the
 * order it made them and as the container renders them unguarded (a cookie changed after
 * {@code addCookie} is sent as it was added), once: the replay carries none, since Set-Cookie is a
 * secret the guard never stores.
 */
@SpringBootTest(classes = TransactionalCookieReplayTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.server.store=datasource",
        "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class TransactionalCookieReplayTest {
  static final Path DIR = AppDatabase.withOrders("idem-tx-cookie-replay-");

  @SpringBootApplication
  @Import(Logins.class)
  static class App {}

  @RestController
  static class Logins {
    private final JdbcTemplate jdbc;

    Logins(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PostMapping("/tx-login")
    @Idempotent(transactional = true)
    void guarded(HttpServletResponse response) {
      jdbc.update("INSERT INTO orders(item) VALUES (?)", "login");
      answer(response);
    }

    @PostMapping("/plain-login")
    void plain(HttpServletResponse response) {
      answer(response);
    }

    private static void answer(HttpServletResponse response) {
      response.addHeader("Set-Cookie", "first=1; Path=/");
      Cookie session = new Cookie("sid", "abc123");
      session.setAttribute("SameSite", "Lax");
      session.setSecure(true);
      response.addCookie(session);
      session.setValue("changed-after-add");
      response.addHeader("Set-Cookie", "last=3");
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
  void theCookiesGoOutOnceAsTheContainerRendersThem() throws Exception {
    HttpResponse<String> plain = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/plain-login"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    HttpRequest keyed = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/tx-login"))
        .header("Idempotency-Key", "k-login").POST(HttpRequest.BodyPublishers.noBody()).build();
    HttpResponse<String> guarded = HTTP.send(keyed, HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> replay = HTTP.send(keyed, HttpResponse.BodyHandlers.ofString());

    List<String> expected = plain.headers().allValues("Set-Cookie");
    assertEquals(3, expected.size(), "the container's own answer: " + expected);
    assertEquals(expected, guarded.headers().allValues("Set-Cookie"), "the first answer");
    assertEquals(Optional.of("true"), replay.headers().firstValue("Idempotent-Replayed"));
    assertEquals(201, replay.statusCode());
    assertEquals(List.of(), replay.headers().allValues("Set-Cookie"), "the replay");
  }
}
