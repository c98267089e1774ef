package dev.idem.spring.boot.rtoday12;

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
import org.springframework.context.annotation.Scope;
import org.springframework.context.annotation.ScopedProxyMode;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Commit 26d774fb reads a handler's marks on "the class the bean was made from"
 * ({@code IdempotentPlacement.beanClass}: {@code AutoProxyUtils.determineTargetClass}) so that a
 * JDK-proxied controller's implementation marks are read. A scoped controller proxied by
 * interfaces ({@code @Scope(proxyMode = ScopedProxyMode.INTERFACES)}, e.g. request scope) is
 * such a JDK proxy too, but its proxy bean carries no ORIGINAL_TARGET_CLASS: the class found is the
 * {@code $Proxy} class (the target is the {@code scopedTarget.} bean), and the most specific method
 * is the proxy's. {@code HandlerTarget.of} therefore misses the implementation's
 * {@code @Idempotent} (class or method), and a keyed POST retried runs the handler twice.
 * {@code IdempotentPlacement.marked} skips the scoped target and reads the proxy's class as well,
 * so the app starts without a word: the startup check and the guard agree, on "unmarked".
 * Not a regression of 26d774fb (the former reads missed it too), but the JDK-proxy case it claims
 * to close: {@code beanClass} would need the {@code scopedTarget.} bean's class
 * ({@code ScopedProxyUtils.getTargetBeanName}).
 */
class RvRtoday12ScopedInterfaceProxyControllerUnguardedTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  static final AtomicInteger ORDERS = new AtomicInteger();
  static final AtomicInteger REFUNDS = new AtomicInteger();

  @TempDir
  Path dir;

  @Test
  void aClassMarkOnAnInterfaceScopedControllerGuardsItsPost() throws Exception {
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
  void aMethodMarkOnAnInterfaceScopedControllerGuardsItsPost() throws Exception {
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
  @Scope(value = "request", proxyMode = ScopedProxyMode.INTERFACES)
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

  @Scope(value = "request", proxyMode = ScopedProxyMode.INTERFACES)
  static class RefundsImpl implements RefundsApi {
    @Override
    @Idempotent
    public String refund(String body) {
      return "refund " + REFUNDS.incrementAndGet();
    }
  }
}
