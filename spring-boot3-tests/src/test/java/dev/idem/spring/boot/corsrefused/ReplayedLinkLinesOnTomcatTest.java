package dev.idem.spring.boot.corsrefused;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.servlet.IdempotencyFilter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression test for a defect found by review, described as it was; fixed: each header name is read once whatever Tomcat lists.
 *
 * <p>Review finding (older than the reviewed commits, the same root as RvRefusedCompletionVaryOnTomcatTest):
 * {@code IdempotencyFilter.headers(response)}, which captures the handler's headers for the store,
 * adds all of {@code getHeaders(name)} for every entry of {@code getHeaderNames()}; Tomcat lists a
 * name once per header line, so a header the handler sent as n lines is stored n times n.
 *
 * <p>Consequence: on Tomcat (Spring Boot's default), a guard whose {@code replayHeaders} lists
 * {@code Link} (which the builder's Javadoc names as listable) replays a paginated answer's two
 * {@code Link} lines as four: the client that retried gets the relations twice over, unlike the
 * first answer, and the stored record holds the duplicates for its retention.
 */
class ReplayedLinkLinesOnTomcatTest {
  @Test
  void aReplayCarriesTheHandlersTwoLinkLinesOnce(@TempDir Path dir) throws Exception {
    IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore())
        .replayHeaders(Set.of("Content-Type", "Link")).purgeInterval(null).build();
    Tomcat tomcat = new Tomcat();
    tomcat.setBaseDir(dir.toString());
    Connector connector = new Connector();
    connector.setPort(0);
    tomcat.setConnector(connector);
    Context context = tomcat.addContext("", dir.toString());
    Tomcat.addServlet(context, "orders", new HttpServlet() {
      private static final long serialVersionUID = 1L;

      @Override
      protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        resp.addHeader("Link", "</orders/1>; rel=\"self\"");
        resp.addHeader("Link", "</orders/1/items>; rel=\"items\"");
        resp.setContentType("application/json");
        resp.getWriter().print("{\"order\":1}");
      }
    });
    context.addServletMappingDecoded("/*", "orders");
    FilterDef def = new FilterDef();
    def.setFilterName("guard");
    def.setFilter(new IdempotencyFilter(guard, r -> "alice"));
    context.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName("guard");
    map.addURLPattern("/*");
    context.addFilterMap(map);
    tomcat.start();
    try {
      URI uri = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/orders");
      HttpClient http = HttpClient.newHttpClient();
      HttpRequest post = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
          .header("Content-Type", "application/json").header("Idempotency-Key", "k-link")
          .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A1\"}")).build();
      HttpResponse<String> first = http.send(post, HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> replay = http.send(post, HttpResponse.BodyHandlers.ofString());

      assertEquals(2, first.headers().allValues("Link").size(), first.headers().map().toString());
      assertEquals("true", replay.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER).orElse(null));
      assertEquals(first.headers().allValues("Link"), replay.headers().allValues("Link"),
          "the replay on Tomcat repeats the handler's Link lines once per line: " + replay.headers().map());
    } finally {
      tomcat.stop();
      tomcat.destroy();
      guard.close();
    }
  }
}
