package dev.idem.server.servlet;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test (found by a review this session).
 *
 * <p>Review of f01ecce4: {@code reset()} forgets whether the writer or the stream was taken.
 *
 * <p>Tomcat's {@code Response.reset()} clears {@code usingWriter} and {@code usingOutputStream},
 * and Jetty 12's sets the output type back to NONE: a handler that began streaming an export
 * through {@code getOutputStream()}, failed, and answers a text error instead
 * ({@code reset(); setStatus(422); getWriter().print(...)}) works without the guard, and so does
 * the reverse. The capture refuses the second of the two for the whole request, also after
 * {@code reset()}: the handler's {@code getWriter()} (or {@code getOutputStream()}) throws
 * {@code IllegalStateException}, the client of the keyed request gets the container's 500 instead
 * of the handler's 422, and the claim is released (its retry runs the handler again). Before
 * f01ecce4 this worked guarded.
 */
class ResetForgetsWriterOrStreamTest {
  private LoopbackJetty jetty;
  private IdempotencyGuard guard;

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).build();
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new Export()), "/exports");
    jetty = LoopbackJetty.guarded(context, guard);
  }

  @AfterEach
  void stop() throws Exception {
    jetty.close();
    guard.close();
  }

  @Test
  void aTextErrorAfterAResetOfAStartedStream() throws Exception {
    jetty.assertGuardedAnswersAsUnguarded("/exports?start=stream", "k-stream-reset-writer", "{\"rows\":3}", 422,
        "export failed at row 2", "getWriter() after reset() of a response whose stream was taken");
  }

  @Test
  void aBinaryAnswerAfterAResetOfAStartedWriter() throws Exception {
    jetty.assertGuardedAnswersAsUnguarded("/exports?start=writer", "k-writer-reset-stream", "{\"rows\":3}", 422,
        "export failed at row 2", "getOutputStream() after reset() of a response whose writer was taken");
  }

  /** Starts an export through the stream (or the writer), fails, resets and answers through the other one. */
  private static final class Export extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      boolean stream = "stream".equals(req.getParameter("start"));
      resp.setContentType("text/csv");
      if (stream) {
        resp.getOutputStream().write("row 1\n".getBytes(StandardCharsets.US_ASCII));
      } else {
        resp.getWriter().print("row 1\n");
      }
      // Row 2 fails: the partial export is dropped and a short error goes out instead.
      resp.reset();
      resp.setStatus(422);
      resp.setContentType("text/plain;charset=UTF-8");
      if (stream) {
        resp.getWriter().print("export failed at row 2");
      } else {
        resp.getOutputStream().write("export failed at row 2".getBytes(StandardCharsets.UTF_8));
      }
    }
  }
}
