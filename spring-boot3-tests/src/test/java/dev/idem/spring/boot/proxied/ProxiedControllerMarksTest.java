package dev.idem.spring.boot.proxied;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.server.Idempotent;
import java.lang.reflect.Proxy;
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
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Scope;
import org.springframework.context.annotation.ScopedProxyMode;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A controller served through a JDK (interface) proxy keeps its {@code @Idempotent}: a keyed POST
 * retried runs the handler once. The mappings are declared on an interface (as OpenAPI-generated
 * APIs do) and the implementation carries the mark, on the class or on its method. Two proxies:
 * {@code @Transactional} with {@code spring.aop.proxy-target-class=false}, and a request-scoped
 * bean with {@code proxyMode = INTERFACES}. Spring MVC maps the proxy's methods and sees the
 * {@code $Proxy} class, whose methods carry no mark; the guard read the marks there, and (for the
 * scoped proxy, whose bean definition names no target class) so did the startup check, so the app
 * started without a word and every keyed retry ran the handler again (reviews rtoday10 and
 * rtoday12; fixed by 26d774fb and 20cb90d9: both read the marks on the bean's target class).
 */
class ProxiedControllerMarksTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @TempDir
  Path dir;

  @Test
  void aClassMarkOnAJdkProxiedControllerGuardsItsPost() throws Exception {
    assertClassMarkGuards(TransactionalApp.class, "spring.aop.proxy-target-class=false");
  }

  @Test
  void aMethodMarkOnAJdkProxiedControllerGuardsItsPost() throws Exception {
    assertMethodMarkGuards(TransactionalApp.class, "spring.aop.proxy-target-class=false");
  }

  @Test
  void aClassMarkOnAnInterfaceScopedControllerGuardsItsPost() throws Exception {
    assertClassMarkGuards(ScopedApp.class);
  }

  @Test
  void aMethodMarkOnAnInterfaceScopedControllerGuardsItsPost() throws Exception {
    assertMethodMarkGuards(ScopedApp.class);
  }

  private void assertClassMarkGuards(Class<?> app, String... properties) throws Exception {
    try (ConfigurableApplicationContext context = start(app, properties)) {
      assertTrue(Proxy.isProxyClass(context.getBean(OrdersApi.class).getClass()), "the controller is a JDK proxy");
      String base = base(context);
      post(base + "/orders", "order-1");
      HttpResponse<String> retry = post(base + "/orders", "order-1");

      assertEquals(1, context.getBean(Handled.class).orders.get(), "the retried keyed POST ran the handler once"
          + " (answer: " + retry.body() + ", Idempotent-Replayed: "
          + retry.headers().firstValue("Idempotent-Replayed").orElse("absent") + ")");
    }
  }

  private void assertMethodMarkGuards(Class<?> app, String... properties) throws Exception {
    try (ConfigurableApplicationContext context = start(app, properties)) {
      String base = base(context);
      post(base + "/refunds", "refund-1");
      HttpResponse<String> retry = post(base + "/refunds", "refund-1");

      assertEquals(1, context.getBean(Handled.class).refunds.get(), "the retried keyed POST ran the handler once"
          + " (answer: " + retry.body() + ", Idempotent-Replayed: "
          + retry.headers().firstValue("Idempotent-Replayed").orElse("absent") + ")");
    }
  }

  private ConfigurableApplicationContext start(Class<?> app, String... extra) {
    List<String> properties = new ArrayList<>(List.of(
        "server.port=0",
        "idem.directory=" + dir.resolve("idem"),
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.client.enabled=false",
        "idem.outbox.enabled=false"));
    properties.addAll(List.of(extra));
    return new SpringApplicationBuilder(app).properties(properties.toArray(String[]::new)).run();
  }

  private static String base(ConfigurableApplicationContext context) {
    return "http://localhost:" + context.getEnvironment().getProperty("local.server.port");
  }

  private static HttpResponse<String> post(String url, String key) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(url)).header("Idempotency-Key", key)
        .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("x")).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** How many times each handler ran, in the app's context (not static: one per app started). */
  static class Handled {
    final AtomicInteger orders = new AtomicInteger();
    final AtomicInteger refunds = new AtomicInteger();
  }

  @RestController
  interface OrdersApi {
    @PostMapping("/orders")
    String create(@RequestBody String body);
  }

  @RestController
  interface RefundsApi {
    @PostMapping("/refunds")
    String refund(@RequestBody String body);
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import({Handled.class, TransactionalOrders.class, TransactionalRefunds.class})
  static class TransactionalApp {}

  @Idempotent
  @Transactional
  static class TransactionalOrders implements OrdersApi {
    private final Handled handled;

    TransactionalOrders(Handled handled) {
      this.handled = handled;
    }

    @Override
    public String create(String body) {
      return "order " + handled.orders.incrementAndGet();
    }
  }

  @Transactional
  static class TransactionalRefunds implements RefundsApi {
    private final Handled handled;

    TransactionalRefunds(Handled handled) {
      this.handled = handled;
    }

    @Override
    @Idempotent
    public String refund(String body) {
      return "refund " + handled.refunds.incrementAndGet();
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import({Handled.class, ScopedOrders.class, ScopedRefunds.class})
  static class ScopedApp {}

  @Idempotent
  @Scope(value = "request", proxyMode = ScopedProxyMode.INTERFACES)
  static class ScopedOrders implements OrdersApi {
    private final Handled handled;

    ScopedOrders(Handled handled) {
      this.handled = handled;
    }

    @Override
    public String create(String body) {
      return "order " + handled.orders.incrementAndGet();
    }
  }

  @Scope(value = "request", proxyMode = ScopedProxyMode.INTERFACES)
  static class ScopedRefunds implements RefundsApi {
    private final Handled handled;

    ScopedRefunds(Handled handled) {
      this.handled = handled;
    }

    @Override
    @Idempotent
    public String refund(String body) {
      return "refund " + handled.refunds.incrementAndGet();
    }
  }
}
