package dev.idem.spring.boot.corsguard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.UrlBasedCorsConfigurationSource;
import org.springframework.web.filter.CorsFilter;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * Regression tests for defects found by review in the CorsFilter set-up docs/spring.md shows for a
 * functional endpoint (the app below registers exactly that snippet). First: the docs registered
 * it as a plain bean, behind the guard; fixed: they register it ahead of the guard, as this test
 * does.
 *
 * <p>Review finding on 50bb619f: docs/spring.md ("Browser front ends (CORS)") tells the user whose
 * handler is a functional endpoint that its CORS is not looked up by the guard, and to "put it in a
 * {@code CorsFilter}". Declared the usual Boot way, as a {@code @Bean CorsFilter}, that filter is
 * registered at {@code Ordered.LOWEST_PRECEDENCE}, behind the guard's filter
 * ({@code IdemServerAutoConfiguration.FILTER_ORDER}, 0), and the docs never say to order it ahead.
 *
 * <p>Consequence: both defects the commit set out to fix remain for exactly the setup the docs
 * recommend: the guard's replay (and 409/422) carries no {@code Access-Control-Allow-Origin}, so the
 * browser front end that retried a timed-out order with its key cannot read it; and a refused
 * origin's 403 (written by the CorsFilter inside the guarded chain) is stored under the key and
 * replayed to the allowed origin's retry.
 */
class DocumentedCorsFilterTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final String SHOP = "https://shop.example";

  private static HttpResponse<String> post(String base, String origin, String key) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(base + "/fn-orders")).header("Idempotency-Key", key)
        .header("Origin", origin).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A1\"}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String allowed(HttpResponse<String> r) {
    return r.headers().firstValue("Access-Control-Allow-Origin").orElse(null);
  }

  @Test
  void theReplayOfAFunctionalEndpointWithTheDocumentedCorsFilterCarriesItsAllowance(@TempDir Path dir)
      throws Exception {
    try (ConfigurableApplicationContext app = start(dir)) {
      String base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");

      HttpResponse<String> first = post(base, SHOP, "order-1");
      HttpResponse<String> replay = post(base, SHOP, "order-1");

      assertEquals(200, first.statusCode(), first.body());
      assertEquals(SHOP, allowed(first), first.headers().map().toString());
      assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse("no"));
      assertEquals(SHOP, allowed(replay), "with the CorsFilter docs/spring.md recommends for a functional endpoint,"
          + " the guard's replay has no CORS allowance, so the browser cannot read it: " + replay.headers().map());

      HttpResponse<String> foreign = post(base, "https://evil.example", "order-2");
      HttpResponse<String> shop = post(base, SHOP, "order-2");
      assertEquals(403, foreign.statusCode());
      assertEquals(200, shop.statusCode(), "the refused origin's 403 was not stored under the key");
      assertEquals("no", shop.headers().firstValue("Idempotent-Replayed").orElse("no"));
    }
  }

  /**
   * Regression test for a defect found by review, described as it was; fixed: docs/spring.md orders the CorsFilter at -200, after Boot's ForwardedHeaderFilter.
   *
   * <p>Review finding on 384e3489 (docs/spring.md, the CORS paragraph's {@code FilterRegistrationBean}
   * snippet).
   *
   * <p>The snippet orders the {@code CorsFilter} at {@code Ordered.HIGHEST_PRECEDENCE} ("before the
   * guard (0) and Spring Security (-100)"). Spring Boot registers its {@code ForwardedHeaderFilter}
   * ({@code server.forward-headers-strategy=framework}, the usual setting behind a TLS-terminating
   * proxy) at that same order, and an app's own registration beans come first among equals. So the
   * documented CorsFilter runs before the forwarded headers are applied, and judges whether a request
   * is cross-origin against the proxy's internal {@code http://host:port}: a browser page of the API's
   * own origin ({@code https://api.example}, not in the CORS list because a same-origin request never
   * needs CORS; browsers send {@code Origin} on every same-origin POST) is taken for a foreign origin.
   *
   * <p>Consequence: following the docs turns every same-origin browser POST of the app behind its
   * proxy into 403 "Invalid CORS request"; the same app with a plain {@code @Bean CorsFilter} or
   * without a CorsFilter answers it. Any order between {@code HIGHEST_PRECEDENCE} and -100 would have
   * done what the docs want.
   */
  @Test
  void aSameOriginPostBehindTheProxyIsNotRefusedByTheDocumentedCorsFilter(@TempDir Path dir) throws Exception {
    try (ConfigurableApplicationContext app = start(dir, "server.forward-headers-strategy=framework")) {
      String base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");

      // The API's own page at https://api.example, through the proxy that terminates TLS.
      HttpResponse<String> own = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/fn-orders"))
          .header("Idempotency-Key", "order-1").header("Origin", "https://api.example")
          .header("X-Forwarded-Proto", "https").header("X-Forwarded-Host", "api.example")
          .header("X-Forwarded-Port", "443").header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A1\"}")).build(), HttpResponse.BodyHandlers.ofString());

      assertEquals(200, own.statusCode(), "a same-origin POST (Origin https://api.example through a proxy for"
          + " https://api.example) was refused by the CorsFilter ordered as docs/spring.md shows, which runs before"
          + " Boot's ForwardedHeaderFilter: " + own.statusCode() + " " + own.body());
    }
  }

  /** The app, on a free port, with these properties besides. */
  private static ConfigurableApplicationContext start(Path dir, String... more) {
    List<String> properties = new ArrayList<>(List.of(
        "server.port=0",
        "idem.directory=" + dir.resolve("idem"),
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.server.routes=POST /fn-orders",
        "idem.client.enabled=false",
        "idem.outbox.enabled=false"));
    properties.addAll(List.of(more));
    return new SpringApplicationBuilder(App.class).properties(properties.toArray(String[]::new)).run();
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    final AtomicInteger runs = new AtomicInteger();

    @Bean
    RouterFunction<ServerResponse> orders() {
      return RouterFunctions.route().POST("/fn-orders",
          request -> ServerResponse.ok().body("{\"order\":" + runs.incrementAndGet() + "}")).build();
    }

    /** "put it in a CorsFilter registered ahead of the guard's filter", as docs/spring.md shows. */
    @Bean
    FilterRegistrationBean<CorsFilter> corsFilter() {
      CorsConfiguration c = new CorsConfiguration();
      c.setAllowedOrigins(List.of(SHOP));
      c.setAllowedMethods(List.of("GET", "POST"));
      c.addAllowedHeader("*");
      UrlBasedCorsConfigurationSource source = new UrlBasedCorsConfigurationSource();
      source.registerCorsConfiguration("/**", c);
      FilterRegistrationBean<CorsFilter> ahead = new FilterRegistrationBean<>(new CorsFilter(source));
      ahead.setOrder(-200);  // as docs/spring.md shows
      return ahead;
    }
  }
}
