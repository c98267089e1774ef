package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.AdapterContract;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.support.OrderApp;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;

/** The Servlet filter in a real Jetty 12 (ee10) on a loopback port 0. */
class ServletFilterTest extends AdapterContract {
  private Server server;

  @Override
  protected URI start(IdempotencyGuard guard) throws Exception {
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new AppServlet(app)), "/*");
    context.addFilter(new FilterHolder(new IdempotencyFilter(guard, r -> r.getHeader("X-Caller"))), "/*",
        EnumSet.of(DispatcherType.REQUEST));
    server.setHandler(context);
    server.start();
    return URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
  }

  @Override
  protected void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
  }

  @Test
  void writerBodiesAndSendErrorAreCapturedToo() throws Exception {
    startDefault();
    var first = post("/orders", "k-w", null, "writer", "{}");
    var again = post("/orders", "k-w", null, "writer", "{}");
    var declined = post("/orders", "k-e", null, "error402", "{}");
    var declinedAgain = post("/orders", "k-e", null, "error402", "{}");

    assertEquals(200, first.statusCode());
    assertEquals("written é 1", first.body());
    assertEquals(first.body(), again.body());
    assertEquals("true", replayed(again).orElse(null));
    assertEquals(402, declined.statusCode());
    assertEquals(402, declinedAgain.statusCode());
    assertEquals("true", replayed(declinedAgain).orElse(null));
    assertEquals(1, app.effects("k-w"));
    assertEquals(1, app.effects("k-e"));
  }

  static final class AppServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient OrderApp app;

    AppServlet(OrderApp app) {
      this.app = app;
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      String key = req.getHeader("Idempotency-Key");
      String mode = req.getHeader("X-Mode");
      byte[] body = req.getInputStream().readAllBytes();
      OrderApp.Answer a;
      try {
        a = app.handle(key, mode, body);
      } catch (InterruptedException e) {
        throw new IOException(e);
      }
      if ("writer".equals(mode)) {
        resp.setContentType("text/plain; charset=utf-8");
        resp.getWriter().print("written é " + app.effects(key));
        return;
      }
      if ("error402".equals(mode)) {
        resp.sendError(402, "declined");
        return;
      }
      resp.setStatus(a.status());
      resp.setContentType(a.contentType());
      if (a.location() != null) {
        resp.setHeader("Location", a.location());
      }
      resp.setHeader("Set-Cookie", "session=never-stored");
      resp.getOutputStream().write(a.body());
    }
  }
}
