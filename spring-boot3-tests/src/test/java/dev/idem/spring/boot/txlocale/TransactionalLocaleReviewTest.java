package dev.idem.spring.boot.txlocale;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.SameHandlerAnswers;
import dev.idem.spring.boot.SameHandlerRoutes;
import dev.idem.spring.boot.TransactionalTomcatTest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
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
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TransactionalLocaleReviewTest extends TransactionalTomcatTest {
  @SpringBootApplication
  @Import(Greetings.class)
  static class App {}

  @RestController
  static class Greetings extends SameHandlerRoutes {
    Greetings(JdbcTemplate jdbc) {
      super(jdbc);
    }

    @Override
    protected void answer(String kind, HttpServletResponse response) throws IOException {
      response.setStatus(201);
      response.setLocale(Locale.FRANCE);
      response.setContentType("application/json");
      response.getOutputStream().write("{\"message\":\"commande créée\"}".getBytes(StandardCharsets.UTF_8));
    }
  }

  @Test
  void theGuardedAnswerAndItsReplayNameTheLanguageTheContainerNames() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("locale");

    assertEquals(Optional.of("fr-FR"), a.unguarded("Content-Language"), "the container's own answer");
    assertEquals(201, a.guarded().statusCode());
    a.assertReplayed();
    // Content-Language is what setLocale set: a transactional route that drops it labels no language.
    a.assertAsUnguarded("Content-Language");
  }
}
