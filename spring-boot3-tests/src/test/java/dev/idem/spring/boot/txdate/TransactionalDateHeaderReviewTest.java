package dev.idem.spring.boot.txdate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.SameHandlerAnswers;
import dev.idem.spring.boot.SameHandlerRoutes;
import dev.idem.spring.boot.TransactionalTomcatTest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.RestController;

/**
 * Review: the starter's {@code BufferedResponse} (a transactional handler's response) formats
 * {@code setDateHeader} with {@code DateTimeFormatter.RFC_1123_DATE_TIME}, which writes a day of
 * month below 10 with one digit ({@code Sat, 1 Feb 2025 10:00:00 GMT}). HTTP senders must write
 * IMF-fixdate (RFC 9110 section 5.6.7: {@code day = 2DIGIT}), as Tomcat does for the same handler
 * unguarded ({@code Sat, 01 Feb 2025 10:00:00 GMT}); strict parsers (Go's {@code http.ParseTime})
 * refuse the one-digit form. {@code Last-Modified} is on the guard's default replay allowlist, so
 * the malformed date is stored and replayed for the whole retention.
 *
 * <p>Deterministic: a fixed date, the same handler body guarded (transactional) and unguarded.
 */
@SpringBootTest(classes = TransactionalDateHeaderReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TransactionalDateHeaderReviewTest extends TransactionalTomcatTest {
  static final long FEB_1 = Instant.parse("2025-02-01T10:00:00Z").toEpochMilli();

  @SpringBootApplication
  @Import(Documents.class)
  static class App {}

  @RestController
  static class Documents extends SameHandlerRoutes {
    Documents(JdbcTemplate jdbc) {
      super(jdbc);
    }

    @Override
    protected void answer(String kind, HttpServletResponse response) {
      response.setStatus(201);
      response.setDateHeader("Last-Modified", FEB_1);
    }
  }

  @Test
  void theGuardedAnswerAndItsReplayCarryTheDateAsTheContainerWritesIt() throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers("date");

    assertEquals(Optional.of("Sat, 01 Feb 2025 10:00:00 GMT"), a.unguarded("Last-Modified"), "the container's IMF-fixdate");
    assertEquals(201, a.guarded().statusCode());
    a.assertReplayed();
    a.assertAsUnguarded("Last-Modified");
  }
}
