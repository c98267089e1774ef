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
 * A transactional handler's {@code setLocale} for a locale the container maps to the charset it
 * uses anyway (de to ISO-8859-1, Tomcat's default, through {@code server.servlet.encoding.mapping}):
 * the container names that charset in the Content-Type, as for any mapped locale, so the guarded
 * answer and its replay must too. A charset read back equal to the one before the locale does not
 * tell "mapped to the same charset" from "no mapping"; a locale with no mapping (it) must still get
 * no charset.
 */
@SpringBootTest(classes = TransactionalLocaleDefaultCharsetTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    // Boot 3 names the mapping server.servlet.encoding.mapping; these tests run on Boot 4 too, and
    // each Boot ignores a name it does not know.
    properties = {"server.servlet.encoding.mapping.de=ISO-8859-1", "spring.servlet.encoding.mapping.de=ISO-8859-1"})
class TransactionalLocaleDefaultCharsetTest extends TransactionalTomcatTest {
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
      response.setLocale(kind.equals("mapped") ? Locale.GERMANY : Locale.ITALY);
      response.setContentType("application/json");
      response.getOutputStream().write("{\"note\":\"gr\u00fc\u00df\"}".getBytes(StandardCharsets.ISO_8859_1));
    }
  }

  @Test
  void aLocaleMappedToTheDefaultCharsetNamesItAsUnguarded() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("mapped");

    assertEquals(Optional.of("application/json;charset=ISO-8859-1"), a.unguarded("Content-Type"),
        "the container's own answer");
    a.assertReplayed();
    a.assertAsUnguarded("Content-Type");
    a.assertBodiesAsUnguarded();
  }

  @Test
  void aLocaleWithoutAMappingNamesNoCharsetAsUnguarded() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("unmapped");

    assertEquals(Optional.of("application/json"), a.unguarded("Content-Type"), "the container's own answer");
    a.assertReplayed();
    a.assertAsUnguarded("Content-Type");
    a.assertBodiesAsUnguarded();
  }
}
