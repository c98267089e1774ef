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
 * An app that configures no response encoding: Tomcat's responses are implicitly ISO-8859-1
 * (Servlet spec), and {@code getCharacterEncoding()} says so though the handler chose none.
 */
@SpringBootTest(classes = TransactionalDefaultEncodingTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TransactionalDefaultEncodingTest extends EncodingAnswersTest {
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
    return StandardCharsets.ISO_8859_1;
  }
}
