package dev.idem.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * Regression test: a container ends a forward (an MVC view rendered by a JSP, say) by closing the
 * response's stream or writer, and falls back to the other when the one it tries is refused:
 * Jetty tries the stream, Tomcat the writer. The held response handed out both, so Jetty closed a
 * stream under a view that wrote through the writer (its text never reached the answer), and
 * Tomcat opened a writer over a view that wrote to the stream (naming ISO-8859-1 in its
 * {@code text/*} type). It refuses the second one now, as the container's does. The real-container
 * cases of the servlet filter are {@code NestedDispatchThroughFilterTest} (Jetty) in the server
 * module and {@code ForwardToStreamViewOnTomcatTest} in spring-boot3-tests.
 */
class BufferedResponseStreamCloseTest {
  @Test
  void aForwardEndedTheWayJettyEndsItKeepsTheWritersText() throws Exception {
    BufferedResponse res = new BufferedResponse(new MockHttpServletResponse(), 1024);
    res.setContentType("text/plain");
    res.getWriter().print("order 1");

    try {
      res.getOutputStream().close();
    } catch (IllegalStateException writerTaken) {
      res.getWriter().close();
    }
    res.getWriter().print(" and more"); // after the end: dropped, as the container drops it

    assertThat(new String(res.captured().body(), StandardCharsets.ISO_8859_1)).isEqualTo("order 1");
  }

  @Test
  void aForwardEndedTheWayTomcatEndsItNamesNoCharsetTheViewDidNotChoose() throws Exception {
    BufferedResponse res = new BufferedResponse(new MockHttpServletResponse(), 1024);
    res.setContentType("text/html");
    res.getOutputStream().write("<p>café</p>".getBytes(StandardCharsets.UTF_8));

    assertThatThrownBy(res::getWriter).isInstanceOf(IllegalStateException.class);
    res.getOutputStream().close();

    assertThat(res.captured().headers().get("Content-Type")).containsExactly("text/html");
    assertThat(res.captured().body()).isEqualTo("<p>café</p>".getBytes(StandardCharsets.UTF_8));
  }
}
