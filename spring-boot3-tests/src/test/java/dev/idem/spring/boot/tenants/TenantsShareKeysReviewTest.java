package dev.idem.spring.boot.tenants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import dev.idem.spring.server.IdempotencyCaller;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Review: docs/server.md promises "a key is unique per caller and route by default ... Two tenants
 * may pick the same key". In the Spring starter the caller is hard-wired to the user principal's
 * name, "anonymous" without one, and there is no property or bean to scope by anything else
 * (the plain filter takes a caller function; the starter builds its filters with its own). A
 * Spring API that authenticates its tenants by API key without Spring Security (a
 * {@code HandlerInterceptor}, a gateway's tenant header) has every tenant as "anonymous": tenant B
 * sending the key and body tenant A used is replayed tenant A's stored answer (A's order, A's
 * data) and B's order is never created; with another body it is refused 422 for A's key.
 */
@SpringBootTest(classes = TenantsShareKeysReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.client.enabled=false", "idem.outbox.enabled=false"})
class TenantsShareKeysReviewTest {
  static final Path DIR = AppDatabase.withOrders("idem-tenants-");

  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, DIR);
  }

  @SpringBootApplication
  @Import(Orders.class)
  static class App {
    static final Map<String, String> TENANT_OF_KEY = Map.of("sk_acme", "acme", "sk_globex", "globex");

    /**
     * The guard's caller: the tenant the API key belongs to, never the key. The guard filter runs
     * before the interceptor below, so it maps the key itself.
     */
    @Bean
    IdempotencyCaller tenantOfApiKey() {
      return request -> TENANT_OF_KEY.get(String.valueOf(request.getHeader("X-Api-Key")));
    }

    /** The app's own API-key authentication: the tenant is the one its key belongs to. */
    @Bean
    WebMvcConfigurer apiKeys() {
      Map<String, String> tenantOfKey = TENANT_OF_KEY;
      return new WebMvcConfigurer() {
        @Override
        public void addInterceptors(InterceptorRegistry registry) {
          registry.addInterceptor(new HandlerInterceptor() {
            @Override
            public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
              String tenant = tenantOfKey.get(request.getHeader("X-Api-Key"));
              if (tenant == null) {
                response.setStatus(401);
                return false;
              }
              request.setAttribute("tenant", tenant);
              return true;
            }
          });
        }
      };
    }
  }

  @RestController
  static class Orders {
    final AtomicInteger created = new AtomicInteger();

    @PostMapping("/orders")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent
    Map<String, Object> create(@RequestAttribute("tenant") String tenant, @RequestBody Map<String, Object> order) {
      return Map.of("tenant", tenant, "order", created.incrementAndGet(), "item", order.get("item"));
    }
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;
  @Autowired
  Orders orders;

  private HttpResponse<String> post(String apiKey, String key, String body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
        .header("Content-Type", "application/json").header("X-Api-Key", apiKey).header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void twoTenantsWithTheSameKeyEachGetTheirOwnOrder() throws Exception {
    int before = orders.created.get(); // the other test shares the context and its counter
    HttpResponse<String> acme = post("sk_acme", "order-2026-0001", "{\"item\":\"book\"}");
    assertEquals(201, acme.statusCode(), acme.body());
    assertTrue(acme.body().contains("\"tenant\":\"acme\""), acme.body());

    HttpResponse<String> globex = post("sk_globex", "order-2026-0001", "{\"item\":\"book\"}");
    assertEquals(201, globex.statusCode(), globex.body());
    assertTrue(globex.headers().firstValue("Idempotent-Replayed").isEmpty(),
        "globex's first request with its key is not a replay of another tenant's answer");
    assertTrue(globex.body().contains("\"tenant\":\"globex\""), "globex was handed: " + globex.body());
    assertEquals(before + 2, orders.created.get(), "each tenant's order was created");
  }

  @Test
  void anotherTenantsKeyWithAnotherBodyIsNotRefused() throws Exception {
    assertEquals(201, post("sk_acme", "order-2026-0002", "{\"item\":\"book\"}").statusCode());
    HttpResponse<String> globex = post("sk_globex", "order-2026-0002", "{\"item\":\"lamp\"}");
    assertEquals(201, globex.statusCode(), "globex is refused for acme's use of the key: " + globex.body());
  }
}
