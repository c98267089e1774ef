package dev.idem.spring.boot.corsproxy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
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
import org.springframework.core.Ordered;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.UrlBasedCorsConfigurationSource;
import org.springframework.web.filter.CorsFilter;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

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
class DocumentedCorsFilterBehindProxyTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final String SHOP = "https://shop.example";

  @Test
  void aSameOriginPostBehindTheProxyIsNotRefusedByTheDocumentedCorsFilter(@TempDir Path dir) throws Exception {
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).properties(
        "server.port=0",
        "server.forward-headers-strategy=framework",
        "idem.directory=" + dir.resolve("idem"),
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.server.routes=POST /fn-orders",
        "idem.client.enabled=false",
        "idem.outbox.enabled=false").run()) {
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

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    final AtomicInteger runs = new AtomicInteger();

    @Bean
    RouterFunction<ServerResponse> orders() {
      return RouterFunctions.route().POST("/fn-orders",
          request -> ServerResponse.ok().body("{\"order\":" + runs.incrementAndGet() + "}")).build();
    }

    /** Exactly the snippet of docs/spring.md. */
    @Bean
    FilterRegistrationBean<CorsFilter> corsFilter() {
      CorsConfiguration shop = new CorsConfiguration();
      shop.setAllowedOrigins(List.of(SHOP));
      shop.setAllowedMethods(List.of("GET", "POST"));
      shop.addAllowedHeader("*");
      UrlBasedCorsConfigurationSource source = new UrlBasedCorsConfigurationSource();
      source.registerCorsConfiguration("/**", shop);
      FilterRegistrationBean<CorsFilter> ahead = new FilterRegistrationBean<>(new CorsFilter(source));
      ahead.setOrder(-200);  // as docs/spring.md shows
      return ahead;
    }
  }
}
