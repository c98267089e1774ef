package dev.idem.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * Regression test: Jetty ends a forward (an MVC view rendered by a JSP, say) by closing the
 * response's output stream, even when the view wrote through the writer. Closing the stream ended
 * the held answer without the text the writer still held, so the transactional guard stored and
 * sent the view's answer empty. The real-Jetty case of the servlet filter is
 * {@code NestedDispatchThroughFilterTest} in the server module.
 */
class BufferedResponseStreamCloseTest {
  @Test
  void closingTheStreamAfterTheWriterWroteKeepsTheText() throws Exception {
    BufferedResponse res = new BufferedResponse(new MockHttpServletResponse(), 1024);
    res.setContentType("text/plain");
    res.getWriter().print("order 1");

    res.getOutputStream().close();
    res.getWriter().print(" and more"); // after the end: dropped, as the container drops it

    assertThat(new String(res.captured().body(), StandardCharsets.ISO_8859_1)).isEqualTo("order 1");
  }
}
