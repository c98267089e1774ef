package dev.idem.spring.boot.forwardguard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.servlet.IdempotencyFilter;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.catalina.core.StandardContext;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression test (found by a review this session).
 *
 * <p>Review of e28c3e0a (guard6). Tomcat's {@code dispatcherWrapsSameObject} (on with
 * {@code STRICT_SERVLET_COMPLIANCE}, or set on the Context) checks that the response a forward is
 * given is the one the servlet was given or wraps it, unwrapping only
 * {@code ServletResponseWrapper}s. The filter now hands the forward a {@code java.lang.reflect.Proxy}
 * that is no wrapper and equals nothing the container knows, so every guarded forward made as the
 * spec asks ({@code getRequestDispatcher(..).forward(req, resp)}) fails with "Original ServletResponse or
 * wrapped original ServletResponse not passed to RequestDispatcher": the client gets 500 and the claim is released. Before
 * e28c3e0a the capture (a wrapper of the container's response) passed the check. Fails on Tomcat 10.1
 * and 11.
 */
class ForwardDispatcherWrapsSameObjectOnTomcatTest {
  @TempDir
  Path dir;
  private IdempotencyGuard guard;
  private Tomcat tomcat;
  private Connector connector;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).purgeInterval(null).build();
    tomcat = new Tomcat();
    tomcat.setBaseDir(dir.toString());
    connector = new Connector();
    connector.setPort(0);
    tomcat.setConnector(connector);
    Context context = tomcat.addContext("", dir.toString());
    Tomcat.addServlet(context, "orders", new Orders());
    context.addServletMappingDecoded("/orders", "orders");
    Tomcat.addServlet(context, "view", new View());
    context.addServletMappingDecoded("/view", "view");
    FilterDef def = new FilterDef();
    def.setFilterName("guard");
    def.setFilter(new IdempotencyFilter(guard, r -> "alice"));
    context.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName("guard");
    map.addURLPattern("/orders");
    context.addFilterMap(map);
    ((StandardContext) context).setDispatcherWrapsSameObject(true);
    // As docs/server.md tells Tomcat 11 users (its default; off in 10.1): see ForwardToStreamViewOnTomcatTest.
    context.setSuspendWrappedResponseAfterForward(false);
    tomcat.start();
  }

  @AfterEach
  void stop() throws Exception {
    tomcat.stop();
    tomcat.destroy();
    guard.close();
  }

  @Test
  void aForwardIsAllowedWhenTheContainerChecksTheDispatchedObjects() throws Exception {
    HttpResponse<String> first = send("k-same-object");
    assertEquals(201, first.statusCode(), "first client: " + first.body());
    assertEquals("created", first.body(), "first client");

    HttpResponse<String> retried = send("k-same-object");
    assertEquals(201, retried.statusCode());
    assertEquals("created", retried.body(), "replay");
  }

  private HttpResponse<String> send(String key) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/orders"))
        .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"a\"}")).build(),
        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  private static final class Orders extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
      // The response it was given, as the spec asks with dispatcherWrapsSameObject.
      req.getRequestDispatcher("/view").forward(req, resp);
    }
  }

  private static final class View extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      resp.setStatus(201);
      resp.setContentType("text/plain");
      resp.getWriter().write("created");
    }
  }
}
