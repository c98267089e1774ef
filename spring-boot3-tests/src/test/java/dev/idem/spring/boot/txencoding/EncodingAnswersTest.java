package dev.idem.spring.boot.txencoding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.boot.SameHandlerAnswers;
import dev.idem.spring.boot.TransactionalTomcatTest;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * The {@link EncodingReaders} kinds answered unguarded (the container's own answer), guarded in
 * transactional mode and replayed: the guarded handler is given the encoding the container gives it
 * unguarded, so it answers as it does there (not 500 on a null encoding), its row commits once, and
 * the first answer and the replay carry the container's bytes and Content-Type. A subclass is one
 * app, with the container's default encoding configured its way, and declares its own tests, so that
 * Boot's test scan filter knows it for a test class and keeps its app out of other apps' scans.
 */
abstract class EncodingAnswersTest extends TransactionalTomcatTest {
  /** The charset the container's responses use when the handler chose none, in this subclass's app. */
  protected abstract Charset containerDefault();

  /** A writer over the output stream, in the response's encoding. */
  static final String STREAM_WRITER = "stream-writer";
  /** Bytes encoded with {@code Charset.forName(response.getCharacterEncoding())}. */
  static final String CHARSET_BYTES = "charset-bytes";
  /** getWriter with no encoding chosen. */
  static final String WRITER = "writer";

  /** Asserts that {@code kind} answers guarded, and on its replay, as it answers unguarded. */
  protected void sameAnswers(String kind) throws Exception {
    SameHandlerAnswers a = sameHandlerAnswers(kind);

    assertEquals(201, a.plain().statusCode(), "the container's own answer");
    String text = new String(a.plain().body(), containerDefault());
    assertTrue(text.contains(EncodingReaders.TEXT + containerDefault().name()),
        "unguarded, the handler is given " + containerDefault() + " and writes in it: " + text);
    assertEquals(201, a.guarded().statusCode(),
        "the guarded answer (500 if getCharacterEncoding() gave the handler null): "
            + new String(a.guarded().body(), StandardCharsets.ISO_8859_1));
    assertEquals(1, rows(kind), "the guarded handler's row, committed once");
    a.assertReplayed();
    a.assertBodiesAsUnguarded();
    a.assertAsUnguarded("Content-Type");
  }
}
