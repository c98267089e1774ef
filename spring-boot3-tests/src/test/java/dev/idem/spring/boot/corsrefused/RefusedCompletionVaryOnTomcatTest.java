package dev.idem.spring.boot.corsrefused;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.RecordId;
import dev.idem.server.servlet.IdempotencyFilter;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.spi.StoredRecord;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.UrlBasedCorsConfigurationSource;
import org.springframework.web.filter.CorsFilter;

/**
 * Regression test for a defect found by review, described as it was; fixed: each header name is read once whatever Tomcat lists.
 *
 * <p>Review finding on 61ecef63 ("CORS kept on a refused 409").
 *
 * <p>{@code IdempotencyFilter.finish} keeps the {@code Access-Control-*} and {@code Vary} headers
 * across {@code response.reset()} with {@code crossOrigin(response)}, which, for every name of
 * {@code response.getHeaderNames()}, adds all of {@code response.getHeaders(name)}. Jetty (the
 * server module's own test) lists a name once; Tomcat, Spring Boot's default container, lists a
 * name once per header line ({@code MimeHeaders}), so a header sent as n lines is copied n times
 * over: n squared lines. Spring's {@code CorsFilter}, which docs/spring.md puts ahead of the guard,
 * adds {@code Vary} as three lines (Origin, Access-Control-Request-Method,
 * Access-Control-Request-Headers).
 *
 * <p>Consequence: on Tomcat with the documented CorsFilter, the 409 of a refused completion (the
 * handler outlived its lease and another instance took the operation over) carries nine
 * {@code Vary} lines, each value three times, where the CorsFilter sent three; every other answer
 * carries three. Any other multi-line header of that family set ahead of the guard is multiplied
 * alike. The test runs the servlet filter on embedded Tomcat, as Boot does, with Spring's
 * CorsFilter registered ahead of it.
 */
class RefusedCompletionVaryOnTomcatTest {
  private static final String SHOP = "https://shop.example";
  private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();

  /** Another instance takes the lapsed claim over just before this one's completion (as in RefusedCompletionKeepsCorsTest). */
  private IdempotencyStore takenOverBeforeTheCompletion() {
    return (IdempotencyStore) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {IdempotencyStore.class}, (proxy, method, args) -> {
          if (method.getName().equals("complete")) {
            RecordId id = (RecordId) args[0];
            StoredRecord r = memory.find(id).orElseThrow();
            Instant later = r.leaseUntil().plusSeconds(1);
            if (!(memory.claim(id, r.fingerprint(), "other-instance/1", later, later.plusSeconds(30),
                later.plus(Duration.ofHours(24))) instanceof ClaimAttempt.Claimed)) {
              throw new AssertionError("the other instance did not take the lapsed claim over");
            }
          }
          try {
            return method.invoke(memory, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  @Test
  void theRefused409CarriesTheCorsFiltersVaryOnceNotOncePerLine(@TempDir Path dir) throws Exception {
    IdempotencyGuard guard = IdempotencyGuard.builder(takenOverBeforeTheCompletion()).purgeInterval(null).build();
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
        resp.setContentType("application/json");
        resp.getWriter().print("{\"order\":1}");
      }
    });
    context.addServletMappingDecoded("/*", "orders");
    CorsConfiguration shop = new CorsConfiguration();
    shop.setAllowedOrigins(List.of(SHOP));
    shop.setAllowedMethods(List.of("GET", "POST"));
    shop.addAllowedHeader("*");
    UrlBasedCorsConfigurationSource source = new UrlBasedCorsConfigurationSource();
    source.registerCorsConfiguration("/**", shop);
    addFilter(context, "cors", new CorsFilter(source));
    addFilter(context, "guard", new IdempotencyFilter(guard, r -> "alice"));
    tomcat.start();
    try {
      URI base = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
      HttpResponse<String> answer = HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.resolve("orders"))
          .timeout(Duration.ofSeconds(10)).header("Origin", SHOP).header("Content-Type", "application/json")
          .header("Idempotency-Key", "k-vary").POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A1\"}")).build(),
          HttpResponse.BodyHandlers.ofString());

      assertEquals(409, answer.statusCode(), answer.body());
      assertEquals(SHOP, answer.headers().firstValue("Access-Control-Allow-Origin").orElse(null));
      assertEquals(List.of("Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers"),
          answer.headers().allValues("Vary"),
          "the refused completion's 409 on Tomcat repeats the CorsFilter's Vary lines once per line: "
              + answer.headers().map());
    } finally {
      tomcat.stop();
      tomcat.destroy();
      guard.close();
    }
  }

  private static void addFilter(Context context, String name, jakarta.servlet.Filter filter) {
    FilterDef def = new FilterDef();
    def.setFilterName(name);
    def.setFilter(filter);
    context.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName(name);
    map.addURLPattern("/*");
    context.addFilterMap(map);
  }
}
