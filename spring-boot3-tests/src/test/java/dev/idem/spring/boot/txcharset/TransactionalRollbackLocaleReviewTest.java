package dev.idem.spring.boot.txcharset;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.SameHandlerRoutes;
import dev.idem.spring.boot.TransactionalTomcatTest;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.RestController;

/**
 * Review (round2bufresp): when the run rolls back (here: the answer is over the buffer's limit),
 * the client gets the guard's own 500, which is not the handler's answer: it must not carry what the
 * handler set on its answer (its Content-Language, the charset its locale maps to, its cookies).
 * The same handler without setLocale gets the baseline 500.
 */
@SpringBootTest(classes = TransactionalRollbackLocaleReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "idem.server.max-buffered-body-bytes=64")
class TransactionalRollbackLocaleReviewTest extends TransactionalTomcatTest {
  @SpringBootApplication
  @Import(Answers.class)
  static class App {}

  /** Only the guarded route is called: over the limit, it rolls back. */
  @RestController
  static class Answers extends SameHandlerRoutes {
    Answers(JdbcTemplate jdbc) {
      super(jdbc);
    }

    @Override
    protected void answer(String kind, HttpServletResponse response) throws IOException {
      response.addCookie(new Cookie("session", "s-" + kind));
      if (kind.equals("locale")) {
        response.setLocale(Locale.FRANCE);
      }
      response.getOutputStream().write(new byte[200]);
    }
  }

  @Test
  void theGuardsOwn500CarriesNothingOfTheRolledBackHandlersLocale() throws Exception {
    HttpResponse<byte[]> baseline = send(post(SameHandlerRoutes.GUARDED + "none", "k-none"));
    HttpResponse<byte[]> withLocale = send(post(SameHandlerRoutes.GUARDED + "locale", "k-locale"));

    assertEquals(500, baseline.statusCode());
    assertEquals(500, withLocale.statusCode());
    for (String h : List.of("Set-Cookie", "Content-Language", "Content-Type")) {
      Optional<String> want = baseline.headers().firstValue(h);
      assertEquals(want, withLocale.headers().firstValue(h), h + " of the guard's 500 (without setLocale: " + want + ")");
    }
  }
}
