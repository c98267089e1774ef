package dev.idem.server.servlet;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test (found by a review this session).
 *
 * <p>Review of e28c3e0a (guard6): {@code reset()} now forgets the capture's writer. A handler that took
 * the writer once ({@code PrintWriter out = resp.getWriter()}), started its answer, failed, and
 * answers its error through the same {@code out} after {@code reset()} (the containers keep that
 * writer working after a reset: it writes the new answer) has its error text left in that writer's
 * encoder: the guard flushes only the writer it still knows, which is none, so the keyed request's
 * client gets the 422 with an empty body, and that empty answer is stored and replayed to every
 * retry. Before e28c3e0a the capture kept the writer across reset() and flushed it.
 */
class OldWriterAfterResetTest {
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
  void theErrorWrittenThroughTheWriterTakenBeforeResetIsSent() throws Exception {
    jetty.assertGuardedAnswersAsUnguarded("/exports", "k-old-writer", "{\"rows\":3}", 422, "export failed at row 2",
        "the keyed request's client");
  }

  /** Writes through one writer, taken once: row 1, then (after a reset) the error. */
  private static final class Export extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      resp.setContentType("text/plain");
      PrintWriter out = resp.getWriter();
      out.print("row 1\n");
      resp.reset();
      resp.setStatus(422);
      resp.setContentType("text/plain");
      out.print("export failed at row 2");
    }
  }
}
