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
 * {@code setCharacterEncoding(null)} (Servlet 6: clears the encoding set before; Tomcat sets its
 * charset to null and isCharacterEncodingSet false) after a type with a charset: unguarded, the
 * Content-Type loses the charset and {@code getWriter()} names the container's default,
 * {@code text/plain;charset=ISO-8859-1}, and a later {@code setLocale(FRANCE)} gives fr's charset
 * again (Boot's Tomcat maps fr to UTF-8): {@code text/plain;charset=UTF-8}. Guarded, {@code BufferedResponse.setCharacterEncoding}
 * writes {@code withCharset(type, null)}: the held Content-Type becomes
 * {@code text/plain;charset=null}, and the encoding stays "chosen", so a later setLocale no longer
 * gives its charset: the answer and every replay say ISO-8859-1 with ISO-8859-1 bytes where the
 * same handler unguarded says UTF-8 with UTF-8 bytes.
 */
@SpringBootTest(classes = RvRlocCharacterEncodingNullTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RvRlocCharacterEncodingNullTest extends TransactionalTomcatTest {
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
      response.setContentType("text/plain;charset=UTF-8");
      response.setCharacterEncoding((String) null);
      response.setLocale(Locale.FRANCE);
      response.getWriter().write("gr\u00fc\u00df");
    }
  }

  @Test
  void aClearedEncodingLetsALaterLocaleChooseAsUnguarded() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("encnull");

    assertEquals(Optional.of("text/plain;charset=UTF-8"), a.unguarded("Content-Type"), "the container's own answer");
    a.assertReplayed();
    a.assertAsUnguarded("Content-Type");
    a.assertBodiesAsUnguarded();
  }
}
