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
 * Review of 76af604f (BufferedResponse.namesCharset): the probe's {@code setContentType(null)} on the
 * container's response forgets a charset an outer filter chose, and {@code mappedCharset} sets it
 * back only when it differs from the container's default. An app that forces its responses to
 * ISO-8859-1 (Boot's CharacterEncodingFilter, {@code server.servlet.encoding.force-response=true},
 * which is also Tomcat's default charset) has its chosen charset silently dropped from the
 * container by a transactional handler's first {@code setLocale}: Tomcat no longer treats the
 * charset as chosen, so the handler's second {@code setLocale} (fr, which Boot's Tomcat maps to
 * UTF-8) now switches the answer to UTF-8. Unguarded, the chosen ISO-8859-1 wins over every locale
 * (Servlet spec: setLocale does not change a charset set by setCharacterEncoding), so the guarded
 * answer and every replay carry another Content-Type and other body bytes than the same handler
 * unguarded. Before 76af604f the probe did not run and both answers were ISO-8859-1.
 */
@SpringBootTest(classes = RvrvspringForcedCharsetLocaleTwiceTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    // Boot 3 names these server.servlet.encoding.*, Boot 4 spring.servlet.encoding.*; each ignores the other.
    properties = {"server.servlet.encoding.charset=ISO-8859-1", "server.servlet.encoding.force-response=true",
        "spring.servlet.encoding.charset=ISO-8859-1", "spring.servlet.encoding.force-response=true"})
class RvrvspringForcedCharsetLocaleTwiceTest extends TransactionalTomcatTest {
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
      response.setLocale(Locale.FRANCE);
      response.setContentType("text/plain");
      response.getWriter().write("gr\u00fc\u00df");
    }
  }

  @Test
  void aChosenDefaultCharsetSurvivesTwoLocalesAsUnguarded() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("twice");

    assertEquals(Optional.of("text/plain;charset=ISO-8859-1"), a.unguarded("Content-Type"),
        "the container's own answer: the filter's chosen charset wins over the locales");
    a.assertReplayed();
    a.assertAsUnguarded("Content-Type");
    a.assertBodiesAsUnguarded();
  }
}
