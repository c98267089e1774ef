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
 * A transactional handler's {@code setLocale} gives its answer the charset the container maps the
 * locale to (Spring Boot's Tomcat maps fr to UTF-8), as the same handler gets unguarded: the
 * Content-Type names it, first and on the replay, and the writer writes in it (a euro sign, which
 * ISO-8859-1, the writer's default, cannot hold).
 */
@SpringBootTest(classes = TransactionalLocaleCharsetTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TransactionalLocaleCharsetTest extends TransactionalTomcatTest {
  @SpringBootApplication
  @Import(Prices.class)
  static class App {}

  @RestController
  static class Prices extends SameHandlerRoutes {
    Prices(JdbcTemplate jdbc) {
      super(jdbc);
    }

    @Override
    protected void answer(String kind, HttpServletResponse response) throws IOException {
      response.setStatus(201);
      response.setLocale(Locale.FRANCE);
      response.setContentType("text/plain");
      response.getWriter().write("12 €");
    }
  }

  @Test
  void theGuardedAnswerAndItsReplayAreInTheCharsetTheContainerMapsTheLocaleTo() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("price");

    assertEquals(Optional.of("text/plain;charset=UTF-8"), a.unguarded("Content-Type"), "the container's own answer");
    a.assertReplayed();
    a.assertAsUnguarded("Content-Type");
    a.assertBodiesAsUnguarded();
  }
}
