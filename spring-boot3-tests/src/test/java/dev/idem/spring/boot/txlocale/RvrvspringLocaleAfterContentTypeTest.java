package dev.idem.spring.boot.txlocale;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.SameHandlerAnswers;
import dev.idem.spring.boot.SameHandlerRoutes;
import dev.idem.spring.boot.TransactionalTomcatTest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Locale;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.RestController;

/**
 * Review (found while reviewing 76af604f; the defect is older, in BufferedResponse.setContentType):
 * a charset that came from a locale becomes "chosen" as soon as the handler sets a content type
 * without a charset ({@code encodingChosen = true} because the type was rewritten to name it), so
 * a later {@code setLocale} no longer changes it. Tomcat does not: {@code setContentType("text/plain")}
 * leaves its isCharacterEncodingSet false, and the next {@code setLocale} (de, mapped to ISO-8859-1)
 * switches the charset. The guarded answer and its replay then say (and are encoded in) UTF-8 where
 * the same handler unguarded answers ISO-8859-1: another Content-Type and other body bytes, against
 * docs/spring.md ("the charset the container maps the locale to ... as the container names it").
 */
@SpringBootTest(classes = RvrvspringLocaleAfterContentTypeTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    // Boot 3 names the mapping server.servlet.encoding.mapping, Boot 4 spring.servlet.encoding.mapping.
    properties = {"server.servlet.encoding.mapping.de=ISO-8859-1", "spring.servlet.encoding.mapping.de=ISO-8859-1"})
class RvrvspringLocaleAfterContentTypeTest extends TransactionalTomcatTest {
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
      response.setLocale(Locale.FRANCE);      // Boot's Tomcat: UTF-8
      response.setContentType("text/plain");  // no charset: not a chosen one
      response.setLocale(Locale.GERMANY);     // mapped to ISO-8859-1: the container switches to it
      response.getWriter().write("gr\u00fc\u00df");
    }
  }

  @Test
  void aLocaleAfterABareContentTypeStillSetsTheCharsetAsUnguarded() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("after");

    assertEquals(Optional.of("text/plain;charset=ISO-8859-1"), a.unguarded("Content-Type"),
        "the container's own answer: the second locale's charset");
    a.assertReplayed();
    a.assertAsUnguarded("Content-Type");
    a.assertBodiesAsUnguarded();
  }
}
