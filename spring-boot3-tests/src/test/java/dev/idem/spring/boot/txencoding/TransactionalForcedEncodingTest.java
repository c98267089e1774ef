package dev.idem.spring.boot.txencoding;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.RestController;

/**
 * An app that forces the response encoding (Boot 3's {@code server.servlet.encoding.force-response},
 * Boot 4's {@code spring.servlet.encoding.force-response}; these tests run on both, and each Boot
 * ignores the other's name): Boot's CharacterEncodingFilter, ahead of the guard, sets UTF-8 on the
 * container's response, so the handler gets it and Tomcat's Content-Type names it, though the
 * handler chose none.
 */
@SpringBootTest(classes = TransactionalForcedEncodingTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {"server.servlet.encoding.force-response=true", "spring.servlet.encoding.force-response=true"})
class TransactionalForcedEncodingTest extends EncodingAnswersTest {
  @SpringBootApplication
  @Import(Readers.class)
  static class App {}

  @RestController
  static class Readers extends EncodingReaders {
    Readers(JdbcTemplate jdbc) {
      super(jdbc);
    }
  }

  @Test
  void aWriterOverTheStreamInTheResponsesEncodingAnswersAsUnguarded() throws Exception {
    sameAnswers(STREAM_WRITER);
  }

  @Test
  void charsetForNameOfTheResponsesEncodingAnswersAsUnguarded() throws Exception {
    sameAnswers(CHARSET_BYTES);
  }

  @Test
  void getWriterWritesInTheContainersDefaultAsUnguarded() throws Exception {
    sameAnswers(WRITER);
  }

  @Override
  protected Charset containerDefault() {
    return StandardCharsets.UTF_8;
  }
}
