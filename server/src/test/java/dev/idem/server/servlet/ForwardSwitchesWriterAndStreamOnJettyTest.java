package dev.idem.server.servlet;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import jakarta.servlet.ServletException;
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
 * <p>Review of f01ecce4: a forward on Jetty 12 lets the view choose the writer or the stream afresh.
 *
 * <p>Jetty's forward calls {@code ServletContextResponse.resetForForward()}, which clears the buffer
 * and sets the output type back to NONE: a handler that wrote a draft through {@code getWriter()}
 * (or {@code getOutputStream()}) and then forwards to a view that writes through the other one
 * works without the guard. The capture now refuses the second of the two for the whole request
 * (f01ecce4) and its forward ({@code ClearingDispatcher}) clears only the buffer, so the view's
 * {@code getOutputStream()} (or {@code getWriter()}) throws {@code IllegalStateException}: the
 * client of the keyed request gets Jetty's 500 instead of the view's answer, and the claim is
 * released, so its retry runs the handler again. (Before f01ecce4 the view's answer went out with
 * the draft mixed into it, the defect f01ecce4 fixed for a view of the same kind; now it is a 500.)
 */
class ForwardSwitchesWriterAndStreamOnJettyTest {
  private LoopbackJetty jetty;
  private IdempotencyGuard guard;

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).build();
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new Handler()), "/orders");
    context.addServlet(new ServletHolder(new StreamView()), "/stream-view");
    context.addServlet(new ServletHolder(new WriterView()), "/writer-view");
    jetty = LoopbackJetty.guarded(context, guard);
  }

  @AfterEach
  void stop() throws Exception {
    jetty.close();
    guard.close();
  }

  @Test
  void aDraftWrittenThroughTheWriterThenAForwardToAStreamView() throws Exception {
    jetty.assertGuardedAnswersAsUnguarded("/orders?draft=writer", "k-writer-then-stream", "{\"sku\":\"a\"}", 201,
        "{\"order\":1}", "the guarded forward to a view that writes through the stream");
  }

  @Test
  void aDraftWrittenThroughTheStreamThenAForwardToAWriterView() throws Exception {
    jetty.assertGuardedAnswersAsUnguarded("/orders?draft=stream", "k-stream-then-writer", "{\"sku\":\"a\"}", 201,
        "order 1", "the guarded forward to a view that writes through the writer");
  }

  /** Writes a progress line through the writer or the stream, then forwards to the other kind of view. */
  private static final class Handler extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
      resp.setContentType("text/plain");
      req.setAttribute("order", 1);
      if ("writer".equals(req.getParameter("draft"))) {
        resp.getWriter().print("working...");
        req.getRequestDispatcher("/stream-view").forward(req, resp);
      } else {
        resp.getOutputStream().write("working...".getBytes(StandardCharsets.US_ASCII));
        req.getRequestDispatcher("/writer-view").forward(req, resp);
      }
    }
  }

  /** A view that encodes its answer itself (JSON, a binary export) and writes the bytes. */
  private static final class StreamView extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      resp.setStatus(201);
      resp.setContentType("application/json");
      resp.getOutputStream().write(("{\"order\":" + req.getAttribute("order") + "}").getBytes(StandardCharsets.UTF_8));
    }
  }

  /** A view that writes text (a template, a JSP). */
  private static final class WriterView extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      resp.setStatus(201);
      resp.setContentType("text/plain");
      resp.getWriter().print("order " + req.getAttribute("order"));
    }
  }
}
