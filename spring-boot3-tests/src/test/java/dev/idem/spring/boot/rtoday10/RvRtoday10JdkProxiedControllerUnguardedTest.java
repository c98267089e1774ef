package dev.idem.spring.boot.rtoday10;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.server.Idempotent;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A controller served through a JDK (interface) proxy loses its {@code @Idempotent} in the guard:
 * a keyed POST retried runs the handler twice, and the app starts without a word.
 *
 * <p>Shape: the mappings are declared on an interface (as OpenAPI-generated APIs do), the
 * implementation carries {@code @Idempotent} (on the class, or on its method) and something that
 * proxies it ({@code @Transactional} here), and the app proxies interfaces
 * ({@code spring.aop.proxy-target-class=false}). Spring MVC maps the proxy's methods (the bean's
 * type is the {@code $Proxy} class). {@code GuardFilter.classMark} reads
 * {@code HandlerMethod.getBeanType()} (the {@code $Proxy} class: {@code ClassUtils.getUserClass}
 * unwraps CGLIB only) and {@code GuardFilter.ownMark} reads {@code hm.getMethod()} (the interface's
 * or the proxy's method), so neither finds the implementation's mark; {@code IdempotentPlacement}
 * reads the target class ({@code AutoProxyUtils.determineTargetClass}), finds the mark well placed
 * and lets the app start. Not new in 08f15a01 (the former {@code annotation(hm)} read the same two
 * places), but it is the "POST handler of a class-marked controller left unguarded" case for proxies.
 */
class RvRtoday10JdkProxiedControllerUnguardedTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  static final AtomicInteger ORDERS = new AtomicInteger();
  static final AtomicInteger REFUNDS = new AtomicInteger();

  @TempDir
  Path dir;

  @Test
  void aClassMarkOnAJdkProxiedControllerGuardsItsPost() throws Exception {
    try (ConfigurableApplicationContext app = start()) {
      assertTrue(Proxy.isProxyClass(app.getBean(OrdersApi.class).getClass()), "the controller is a JDK proxy");
      String base = base(app);
      post(base + "/orders", "order-1");
      HttpResponse<String> retry = post(base + "/orders", "order-1");

      assertEquals(1, ORDERS.get(), "the retried keyed POST ran the handler once (answer: " + retry.body()
          + ", Idempotent-Replayed: " + retry.headers().firstValue("Idempotent-Replayed").orElse("absent") + ")");
    }
  }

  @Test
  void aMethodMarkOnAJdkProxiedControllerGuardsItsPost() throws Exception {
    try (ConfigurableApplicationContext app = start()) {
      String base = base(app);
      post(base + "/refunds", "refund-1");
      HttpResponse<String> retry = post(base + "/refunds", "refund-1");

      assertEquals(1, REFUNDS.get(), "the retried keyed POST ran the handler once (answer: " + retry.body()
          + ", Idempotent-Replayed: " + retry.headers().firstValue("Idempotent-Replayed").orElse("absent") + ")");
    }
  }

  private ConfigurableApplicationContext start() {
    ORDERS.set(0);
    REFUNDS.set(0);
    return new SpringApplicationBuilder(App.class).properties(
        "server.port=0",
        "spring.aop.proxy-target-class=false",
        "idem.directory=" + dir.resolve("idem"),
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.client.enabled=false",
        "idem.outbox.enabled=false").run();
  }

  private static String base(ConfigurableApplicationContext app) {
    return "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
  }

  private static HttpResponse<String> post(String url, String key) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(url)).header("Idempotency-Key", key)
        .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("x")).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import({OrdersImpl.class, RefundsImpl.class})
  static class App {}

  @RestController
  interface OrdersApi {
    @PostMapping("/orders")
    String create(@RequestBody String body);
  }

  @Idempotent
  @Transactional
  static class OrdersImpl implements OrdersApi {
    @Override
    public String create(String body) {
      return "order " + ORDERS.incrementAndGet();
    }
  }

  @RestController
  interface RefundsApi {
    @PostMapping("/refunds")
    String refund(@RequestBody String body);
  }

  @Transactional
  static class RefundsImpl implements RefundsApi {
    @Override
    @Idempotent
    public String refund(String body) {
      return "refund " + REFUNDS.incrementAndGet();
    }
  }
}
