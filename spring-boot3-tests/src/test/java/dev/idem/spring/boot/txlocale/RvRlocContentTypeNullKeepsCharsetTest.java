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
 * {@code setContentType(null)} (Servlet: clears the type; Tomcat also clears the charset and its
 * isCharacterEncodingSet) after a type with a charset: unguarded, the next bare type and
 * {@code getWriter()} fall back to the container's default, {@code text/plain;charset=ISO-8859-1}.
 * Guarded, {@code BufferedResponse.setContentType(null)} only removes the header and keeps
 * {@code characterEncoding} (chosen), so the answer and every replay say UTF-8 with UTF-8 bytes. The
 * probe added in 51ebc9fb relies on exactly this Tomcat behaviour ("setContentType(null) forgets the
 * container's charset"), while the held response does not follow it.
 */
@SpringBootTest(classes = RvRlocContentTypeNullKeepsCharsetTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RvRlocContentTypeNullKeepsCharsetTest extends TransactionalTomcatTest {
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
      response.setContentType(null);
      response.setContentType("text/plain");
      response.getWriter().write("gr\u00fc\u00df");
    }
  }

  @Test
  void aClearedTypeForgetsItsCharsetAsUnguarded() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("typenull");

    assertEquals(Optional.of("text/plain;charset=ISO-8859-1"), a.unguarded("Content-Type"), "the container's own answer");
    a.assertReplayed();
    a.assertAsUnguarded("Content-Type");
    a.assertBodiesAsUnguarded();
  }
}
