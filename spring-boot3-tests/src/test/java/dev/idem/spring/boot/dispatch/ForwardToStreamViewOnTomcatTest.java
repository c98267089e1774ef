package dev.idem.spring.boot.dispatch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.servlet.IdempotencyFilter;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
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
 * Regression test (found by review of the nested-dispatch fix). On Tomcat 11 (spring-boot4-tests
 * runs these sources too) the context is set as docs/server.md says (see the setup).
 *
 * <p>A guarded servlet on Tomcat that forwards to a view writing bytes through
 * {@code getOutputStream()} (a static file, a template engine that encodes itself, a binary
 * export) with a type such as {@code text/html}. Tomcat ends a forward through a wrapped response
 * by calling {@code getWriter().close()}, falling back to the stream only when {@code getWriter()}
 * throws {@code IllegalStateException} (the stream is in use). The filter's capturing response
 * never throws there: it creates a writer, and its {@code getWriter()} names ISO-8859-1 on the
 * Content-Type. The client of the keyed request (and every replay) gets
 * {@code text/html;charset=ISO-8859-1} over the view's UTF-8 bytes, and a browser shows
 * "commande cr\u00c3\u00a9\u00c3\u00a9e"; the same forward without the guard (an unguarded GET here) is sent
 * {@code text/html} as the view set it. The filter is mapped for every dispatcher type, as
 * b8bbf1f5's catch-all case; the forward goes through the wrapper with the REQUEST mapping alone too.
 */
class ForwardToStreamViewOnTomcatTest {
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
    // Tomcat 11 finishes the container's own response at the end of a forward through a wrapper
    // (on by default there, off in 10.1): the guard's held answer would then be sent into nothing.
    // What docs/server.md tells Tomcat 11 users to set.
    context.setSuspendWrappedResponseAfterForward(false);
    Tomcat.addServlet(context, "orders", new Orders());
    context.addServletMappingDecoded("/orders", "orders");
    Tomcat.addServlet(context, "streamView", new StreamView());
    context.addServletMappingDecoded("/stream-view", "streamView");
    FilterDef def = new FilterDef();
    def.setFilterName("guard");
    def.setFilter(new IdempotencyFilter(guard, r -> "alice"));
    context.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName("guard");
    map.addURLPattern("/*");
    for (String type : new String[] {"REQUEST", "FORWARD", "INCLUDE", "ERROR", "ASYNC"}) {
      map.setDispatcher(type);
    }
    context.addFilterMap(map);
    tomcat.start();
  }

  @AfterEach
  void stop() throws Exception {
    tomcat.stop();
    tomcat.destroy();
    guard.close();
  }

  @Test
  void theViewsContentTypeIsKeptWhenItWroteThroughTheStream() throws Exception {
    HttpResponse<String> unguarded = send("GET", null);
    assertEquals("text/html", unguarded.headers().firstValue("Content-Type").orElse(null),
        "Tomcat's own answer to the forward, without the guard");

    HttpResponse<String> first = send("POST", "k-stream");
    assertEquals(201, first.statusCode(), first.body());
    assertEquals("<p>commande cr\u00e9\u00e9e</p>", first.body());
    assertEquals("text/html", first.headers().firstValue("Content-Type").orElse(null),
        "the guarded forward's Content-Type names a charset the view's UTF-8 bytes are not in");
  }

  private HttpResponse<String> send(String method, String key) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/orders"))
        .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json");
    if (key != null) {
      b.header("Idempotency-Key", key);
    }
    return http.send(b.method(method, "GET".equals(method) ? HttpRequest.BodyPublishers.noBody()
        : HttpRequest.BodyPublishers.ofString("{\"sku\":\"a\"}")).build(),
        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  private static final class Orders extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
      req.getRequestDispatcher("/stream-view").forward(req, resp);
    }
  }

  private static final class StreamView extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      resp.setStatus(201);
      resp.setContentType("text/html");
      resp.getOutputStream().write("<p>commande créée</p>".getBytes(StandardCharsets.UTF_8));
    }
  }
}
