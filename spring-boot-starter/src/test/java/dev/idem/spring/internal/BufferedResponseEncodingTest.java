package dev.idem.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.Charset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * A transactional handler that chose no character encoding reads the container's response's
 * ({@code getCharacterEncoding()}), as it does unguarded, without choosing it: code that encodes
 * with it works, the held Content-Type names no charset the handler did not choose, and
 * {@code getWriter} writes in that encoding and names it. Compared with the container's answer,
 * whatever its default (the Servlet spec's ISO-8859-1, or a context's response encoding). The
 * real-Tomcat tests are in spring-boot3-tests ({@code txencoding}).
 */
class BufferedResponseEncodingTest {
  private static final String TEXT = "café";

  /** A container response whose default is the Servlet spec's, and one whose context sets UTF-8. */
  private static List<MockHttpServletResponse> containers() {
    MockHttpServletResponse utf8 = new MockHttpServletResponse();
    utf8.setDefaultCharacterEncoding("UTF-8");
    return List.of(new MockHttpServletResponse(), utf8);
  }

  @Test
  void aHandlerThatChoseNoneReadsTheContainersEncodingWithoutChoosingIt() throws Exception {
    for (MockHttpServletResponse container : containers()) {
      String want = container.getCharacterEncoding();
      BufferedResponse res = new BufferedResponse(container, 1024);
      res.setContentType("text/plain");

      assertThat(res.getCharacterEncoding()).as("the container's default").isEqualTo(want);
      Writer w = new OutputStreamWriter(res.getOutputStream(), res.getCharacterEncoding());
      w.write(TEXT);
      w.flush();

      assertThat(res.captured().body()).isEqualTo(TEXT.getBytes(Charset.forName(want)));
      assertThat(res.captured().headers().get("Content-Type")).as("no charset the handler did not choose")
          .containsExactly("text/plain");
      assertThat(container.getContentType()).as("the container's response is not written").isNull();
    }
  }

  @Test
  void getWriterWritesInTheContainersDefaultAndNamesIt() {
    for (MockHttpServletResponse container : containers()) {
      String want = container.getCharacterEncoding();
      BufferedResponse res = new BufferedResponse(container, 1024);
      res.setContentType("text/plain");

      res.getWriter().write(TEXT);

      assertThat(res.getCharacterEncoding()).isEqualTo(want);
      assertThat(res.captured().body()).isEqualTo(TEXT.getBytes(Charset.forName(want)));
      assertThat(res.captured().headers().get("Content-Type")).containsExactly("text/plain;charset=" + want);
    }
  }

  @Test
  void theHandlersChoiceWinsUntilResetForgetsIt() {
    for (MockHttpServletResponse container : containers()) {
      BufferedResponse res = new BufferedResponse(container, 1024);
      res.setCharacterEncoding("UTF-16");
      assertThat(res.getCharacterEncoding()).isEqualTo("UTF-16");

      res.reset();

      assertThat(res.getCharacterEncoding()).isEqualTo(container.getCharacterEncoding());
    }
  }
}
