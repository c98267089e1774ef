package dev.idem.spring.boot.txencoding;

import jakarta.servlet.ServletContext;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.web.servlet.ServletContextInitializer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.RestController;

/**
 * An app whose servlet context sets a response encoding (Servlet 4.0's
 * {@link ServletContext#setResponseCharacterEncoding}, as a deployment descriptor's
 * {@code <response-character-encoding>} does): Tomcat's responses are in it when the handler chose
 * none, and name it only once chosen (getWriter chooses it; an output stream does not).
 */
@SpringBootTest(classes = TransactionalContextEncodingTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TransactionalContextEncodingTest extends EncodingAnswersTest {
  @SpringBootApplication
  @Import(Readers.class)
  static class App {
    @Bean
    ServletContextInitializer responseEncoding() {
      return context -> context.setResponseCharacterEncoding(StandardCharsets.UTF_8.name());
    }
  }

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
