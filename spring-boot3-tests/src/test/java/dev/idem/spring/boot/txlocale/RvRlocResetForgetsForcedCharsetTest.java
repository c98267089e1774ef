package dev.idem.spring.boot.txlocale;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.SameHandlerAnswers;
import dev.idem.spring.boot.SameHandlerRoutes;
import dev.idem.spring.boot.TransactionalTomcatTest;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Locale;
import java.util.Optional;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.RestController;

/**
 * An app that forces its responses to UTF-8 (Boot's CharacterEncodingFilter ahead of the guard chooses
 * it on the container's response) and maps de to ISO-8859-1; the transactional handler calls
 * {@code reset()} and then sets de and a bare type. Tomcat's reset forgets every charset on the
 * response, the filter's chosen one included, so unguarded the locale's ISO-8859-1 is named and the
 * body is ISO-8859-1. Guarded, {@code BufferedResponse.reset} forgets only what the handler set: the
 * probe still finds the filter's chosen UTF-8 on the container and takes it as the locale's (before
 * 51ebc9fb, getWriter read it from the container instead: the test fails on the parent commit too),
 * so the answer and every replay say UTF-8 with UTF-8 bytes: another Content-Type and other body
 * bytes than the same handler unguarded.
 */
@SpringBootTest(classes = RvRlocResetForgetsForcedCharsetTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {"server.servlet.encoding.force-response=true", "spring.servlet.encoding.force-response=true",
        "server.servlet.encoding.mapping.de=ISO-8859-1", "spring.servlet.encoding.mapping.de=ISO-8859-1"})
@Disabled("known defect, open (review rloc): a handler's reset() keeps the charset a filter before the"
    + " guard forced; resetting the container too made the first answer and its replay differ"
    + " (RvRloc2ResetReplayCarriesFiltersHeaderTest) and was not landed")
class RvRlocResetForgetsForcedCharsetTest extends TransactionalTomcatTest {
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
      response.setContentType("application/json");
      response.reset();
      response.setStatus(201);
      response.setLocale(Locale.GERMANY);
      response.setContentType("text/plain");
      response.getWriter().write("gr\u00fc\u00df");
    }
  }

  @Test
  void resetForgetsTheFiltersCharsetAsUnguarded() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("resetforced");

    assertEquals(Optional.of("text/plain;charset=ISO-8859-1"), a.unguarded("Content-Type"),
        "the container's own answer: reset forgot the forced charset, de's mapping is named");
    a.assertReplayed();
    a.assertAsUnguarded("Content-Type");
    a.assertBodiesAsUnguarded();
  }
}
