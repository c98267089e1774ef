package dev.idem.spring.boot.txencoding;

import dev.idem.spring.boot.SameHandlerRoutes;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.Charset;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Handler bodies that choose no character encoding and take the response's
 * ({@code getCharacterEncoding()}) to encode their text, as much handler code does: the container
 * names one even when none was chosen (ISO-8859-1, or the context's response encoding), so that
 * code works unguarded. Each writes the name it got into its body, so that a test sees which one
 * the handler was given, and "café", whose bytes differ between the charsets.
 *
 * <p>Abstract, so that no app's scan picks it up (the module's {@code TestApp} scans this package):
 * each test app's own {@code @RestController} extends it.
 */
abstract class EncodingReaders extends SameHandlerRoutes {
  /** The text each kind writes: an e-acute, one byte in ISO-8859-1, two in UTF-8. */
  static final String TEXT = "café in ";

  EncodingReaders(JdbcTemplate jdbc) {
    super(jdbc);
  }

  @Override
  protected void answer(String kind, HttpServletResponse response) throws IOException {
    response.setStatus(201);
    switch (kind) {
      case EncodingAnswersTest.STREAM_WRITER -> {
        // The common idiom: a writer over the output stream, in the response's encoding.
        response.setContentType("text/plain");
        Writer w = new OutputStreamWriter(response.getOutputStream(), response.getCharacterEncoding());
        w.write(TEXT + response.getCharacterEncoding());
        w.flush();
      }
      case EncodingAnswersTest.CHARSET_BYTES -> {
        response.setContentType("application/json");
        Charset cs = Charset.forName(response.getCharacterEncoding());
        response.getOutputStream().write(("{\"text\":\"" + TEXT + cs.name() + "\"}").getBytes(cs));
      }
      case EncodingAnswersTest.WRITER -> {
        // getWriter with no encoding chosen: the container's default, which it then names.
        response.setContentType("text/plain");
        response.getWriter().write(TEXT + response.getCharacterEncoding());
      }
      default -> throw new IllegalArgumentException(kind);
    }
  }
}
