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
 * An app that forces its responses to UTF-8 (Boot's CharacterEncodingFilter ahead of the guard chooses
 * it on the container's response) and maps de to ISO-8859-1: a charset chosen before wins over every
 * locale (Servlet spec), so Tomcat names UTF-8 on the handler's Content-Type, also for a handler that
 * writes through the output stream. The guard reads the locale's charset from the container and puts
 * the container's response back as it was, the chosen charset chosen still: the handler's second
 * {@code setLocale(GERMANY)} must not find de's ISO-8859-1 there.
 */
@SpringBootTest(classes = TransactionalLocaleForcedCharsetTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    // Boot 3 names these server.servlet.encoding.*, Boot 4 spring.servlet.encoding.*; each ignores the other.
    properties = {"server.servlet.encoding.force-response=true", "spring.servlet.encoding.force-response=true",
        "server.servlet.encoding.mapping.de=ISO-8859-1", "spring.servlet.encoding.mapping.de=ISO-8859-1"})
class TransactionalLocaleForcedCharsetTest extends TransactionalTomcatTest {
  @SpringBootApplication
  @Import(Notes.class)
  static class App {}

  @RestController
  static class Notes extends SameHandlerRoutes {
    Notes(JdbcTemplate jdbc) {
      super(jdbc);
    }

    @Override
    protected void answer(String kind, HttpServletResponse response) throws IOException {
      response.setStatus(201);
      response.setLocale(Locale.GERMANY);
      response.setLocale(Locale.ITALY);
      response.setLocale(Locale.GERMANY);
      response.setContentType("application/json");
      response.getOutputStream().write("{\"note\":\"gr\u00fc\u00df\"}".getBytes(StandardCharsets.UTF_8));
    }
  }

  @Test
  void aChosenCharsetIsNamedOverEveryLocaleAsUnguarded() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("forced");

    assertEquals(Optional.of("application/json;charset=UTF-8"), a.unguarded("Content-Type"),
        "the container's own answer: the filter's chosen charset wins over the locales");
    a.assertReplayed();
    a.assertAsUnguarded("Content-Type");
    a.assertBodiesAsUnguarded();
  }
}
