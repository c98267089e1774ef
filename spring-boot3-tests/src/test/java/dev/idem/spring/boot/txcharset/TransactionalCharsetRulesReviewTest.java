package dev.idem.spring.boot.txcharset;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.SameHandlerAnswers;
import dev.idem.spring.boot.SameHandlerRoutes;
import dev.idem.spring.boot.TransactionalTomcatTest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.RestController;

/**
 * Review (round2bufresp): the same handler answered unguarded (Tomcat, the baseline), guarded in
 * transactional mode, and replayed must carry the same Content-Type, Content-Language and bytes.
 */
@SpringBootTest(classes = TransactionalCharsetRulesReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TransactionalCharsetRulesReviewTest extends TransactionalTomcatTest {
  @SpringBootApplication
  @Import(Answers.class)
  static class App {}

  @RestController
  static class Answers extends SameHandlerRoutes {
    Answers(JdbcTemplate jdbc) {
      super(jdbc);
    }

    @Override
    protected void answer(String kind, HttpServletResponse response) throws IOException {
      response.setStatus(201);
      switch (kind) {
        case "header-type" -> {
          // The type, charset included, set as a header: Tomcat takes it as setContentType.
          response.setHeader("Content-Type", "text/plain;charset=UTF-8");
          response.getWriter().write("12 €");
        }
        case "type-after-writer" -> {
          // After getWriter the charset is fixed (ISO-8859-1): Tomcat ignores the type's charset.
          response.getWriter().write("{\"price\":\"12\"}");
          response.setContentType("application/json;charset=UTF-8");
        }
        case "locale-reset" -> {
          response.setLocale(Locale.FRANCE);
          response.reset();
          response.setStatus(201);
          response.setContentType("application/octet-stream");
          response.getOutputStream().write(new byte[] {1, 2, 3});
        }
        case "locale-header-type" -> {
          response.setLocale(Locale.FRANCE);
          response.setHeader("Content-Type", "image/png");
          response.getOutputStream().write(new byte[] {1, 2, 3});
        }
        default -> throw new IllegalArgumentException(kind);
      }
    }
  }

  /** setHeader("Content-Type", "...;charset=UTF-8") then getWriter: the held writer ignores the charset. */
  @Test
  void aContentTypeHeaderNamesTheWritersCharset() throws Exception {
    sameAnswers("header-type");
  }

  /** getWriter then setContentType("...;charset=UTF-8"): the held type names a charset the body is not in. */
  @Test
  void aCharsetAfterGetWriterIsIgnoredAsTomcatIgnoresIt() throws Exception {
    sameAnswers("type-after-writer");
  }

  /** setLocale then reset(): the locale passed to the container's response stays there. */
  @Test
  void resetForgetsTheLocaleAndItsCharset() throws Exception {
    sameAnswers("locale-reset");
  }

  /** setLocale then a Content-Type header: the first answer gets the container's charset, the replay not. */
  @Test
  void theReplayHasTheFirstAnswersContentTypeAfterSetLocale() throws Exception {
    sameAnswers("locale-header-type");
  }

  private void sameAnswers(String kind) throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers(kind);

    assertEquals(201, a.plain().statusCode());
    a.assertReplayed();
    a.assertBodiesAsUnguarded();
    for (String h : List.of("Content-Type", "Content-Language")) {
      a.assertAsUnguarded(h);
    }
  }
}
