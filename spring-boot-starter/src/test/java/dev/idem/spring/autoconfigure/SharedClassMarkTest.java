package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.internal.GuardFilter;
import dev.idem.spring.server.Idempotent;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.mock.web.MockServletConfig;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.WebApplicationContext;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;

/**
 * A class-level {@code @Idempotent} that a controller carries from somewhere shared (a base class, a
 * stereotype, a stereotype built on another) is judged with every class that carries it from there:
 * kept while one of them takes an unsafe method (it guards that one's writes), refused when none
 * does (it guards nothing), as a mark written on a safe-only controller is. Reviews rtoday16 (an
 * inherited mark shared with a write controller refused), rtoday18 (an alias or base class used only
 * by read-only controllers started silently) and rtoday19 (a stereotype nested two levels split
 * from the one it is built on).
 */
class SharedClassMarkTest {
  private static final AutoConfigurations IDEM = AutoConfigurations.of(IdemAutoConfiguration.class,
      IdemClientAutoConfiguration.class, IdemServerAutoConfiguration.class, IdemWebhooksAutoConfiguration.class);

  private final WebApplicationContextRunner mvc = new WebApplicationContextRunner()
      .withConfiguration(IDEM).withUserConfiguration(Mvc.class).withPropertyValues("idem.outbox.enabled=false");

  @Configuration(proxyBeanMethods = false)
  @EnableWebMvc
  static class Mvc {}

  /** The app's base of every API controller: its mark guards each controller's writes. */
  @Idempotent
  abstract static class GuardedApi {}

  @RestController
  static class InheritedOrders extends GuardedApi {
    final AtomicInteger runs = new AtomicInteger();

    @PostMapping("/rv16-inh-orders")
    String create() {
      return "order #" + runs.incrementAndGet();
    }
  }

  /** A read-only controller of the same app: it extends the base like every other one. */
  @RestController
  static class InheritedCatalog extends GuardedApi {
    @GetMapping("/rv16-inh-catalog")
    String list() {
      return "catalog";
    }
  }

  /** The same as a composed stereotype: every controller of the app is a @GuardedController. */
  @Target(ElementType.TYPE)
  @Retention(RetentionPolicy.RUNTIME)
  @RestController
  @Idempotent
  @interface GuardedController {}

  @GuardedController
  static class StereotypeOrders {
    final AtomicInteger runs = new AtomicInteger();

    @PostMapping("/rv16-st-orders")
    String create() {
      return "order #" + runs.incrementAndGet();
    }
  }

  @GuardedController
  static class StereotypeCatalog {
    @GetMapping("/rv16-st-catalog")
    String list() {
      return "catalog";
    }
  }

  @Test
  void aBaseClassMarkSharedWithAReadOnlyControllerStillStartsAndGuardsTheWrites(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(InheritedOrders.class).withBean(InheritedCatalog.class)
        .run(context -> {
          assertNull(context.getStartupFailure(), () -> "an app guarding its writes through a base class's mark"
              + " no longer starts: " + messages(context.getStartupFailure()));
          assertOncePerKey(http(context), "/rv16-inh-orders", context.getBean(InheritedOrders.class).runs);
        });
  }

  @Test
  void aStereotypeMarkSharedWithAReadOnlyControllerStillStartsAndGuardsTheWrites(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(StereotypeOrders.class).withBean(StereotypeCatalog.class)
        .run(context -> {
          assertNull(context.getStartupFailure(), () -> "an app guarding its writes through a composed stereotype"
              + " no longer starts: " + messages(context.getStartupFailure()));
          assertOncePerKey(http(context), "/rv16-st-orders", context.getBean(StereotypeOrders.class).runs);
        });
  }

  /** The app's own name for {@code @Idempotent(keyRequired = false)}: written on a class, it is that class's mark. */
  @Target({ElementType.TYPE, ElementType.METHOD})
  @Retention(RetentionPolicy.RUNTIME)
  @Idempotent(keyRequired = false)
  @interface IdempotentNoKey {}

  /** Its only use in the app: a controller whose handlers all take GET. */
  @RestController
  @IdempotentNoKey
  static class ComposedReadOnlyPrices {
    @GetMapping("/rv18-composed-prices")
    String list() {
      return "prices";
    }
  }

  /** A marked base class that only read-only controllers extend. */
  @Idempotent
  abstract static class ReadApi {}

  @RestController
  static class BaseReadOnlyPrices extends ReadApi {
    @GetMapping("/rv18-base-prices")
    String list() {
      return "prices";
    }
  }

  @Test
  void aComposedMarkUsedOnlyOnASafeOnlyControllerIsRefused(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(ComposedReadOnlyPrices.class).run(context -> {
      Throwable failure = context.getStartupFailure();
      assertNotNull(failure, "@IdempotentNoKey (a composed @Idempotent) written on a controller whose only handler"
          + " takes GET guards nothing, and no other class carries it, yet the app started silently: ab5eca10"
          + " keeps every mark that is not a direct @Idempotent (getDeclaredAnnotation)");
      String m = messages(failure);
      assertTrue(m.contains(ComposedReadOnlyPrices.class.getName()) && m.contains("guards nothing"), m);
    });
  }

  @Test
  void aBaseClassMarkThatOnlySafeOnlyControllersInheritIsRefused(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(BaseReadOnlyPrices.class).run(context -> {
      Throwable failure = context.getStartupFailure();
      assertNotNull(failure, "the @Idempotent on ReadApi, which only a controller whose only handler takes GET"
          + " extends, guards no request in the app, yet the app started silently (ab5eca10: an inherited mark is"
          + " never refused, though here it guards no other class's writes)");
      String m = messages(failure);
      assertTrue(m.contains(BaseReadOnlyPrices.class.getName()) || m.contains(ReadApi.class.getName()), m);
    });
  }

  /** The app's stereotype of its API controllers: every one of them guarded. */
  @Target(ElementType.TYPE)
  @Retention(RetentionPolicy.RUNTIME)
  @RestController
  @Idempotent
  @interface ApiStereotype {}

  /** A stereotype built on it (an admin area): the same mark, two levels down. */
  @Target(ElementType.TYPE)
  @Retention(RetentionPolicy.RUNTIME)
  @ApiStereotype
  @interface AdminStereotype {}

  /** Write controller through the nested stereotype: its POST is guarded by @ApiStereotype's mark. */
  @AdminStereotype
  static class AdminRefunds {
    @PostMapping("/rv19-admin-refunds")
    String refund() {
      return "refunded";
    }
  }

  /** Read-only controller through the inner stereotype: shares @ApiStereotype's mark with AdminRefunds. */
  @ApiStereotype
  static class Catalog {
    @GetMapping("/rv19-catalog")
    String list() {
      return "catalog";
    }
  }

  /** Write controller through the inner stereotype. */
  @ApiStereotype
  static class Orders {
    @PostMapping("/rv19-orders")
    String create() {
      return "order";
    }
  }

  /** Read-only controller through the nested stereotype: shares @ApiStereotype's mark with Orders. */
  @AdminStereotype
  static class AdminReport {
    @GetMapping("/rv19-admin-report")
    String report() {
      return "report";
    }
  }

  @Test
  void aReadOnlyControllerSharingTheMarkWithANestedStereotypesWriterStarts(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(AdminRefunds.class).withBean(Catalog.class)
        .run(context -> assertNull(context.getStartupFailure(), () -> "@ApiStereotype's @Idempotent guards"
            + " AdminRefunds' POST (carried through @AdminStereotype), and Catalog shares that mark, yet the app was refused:"
            + " markSource groups AdminRefunds under @AdminStereotype (the root annotation), apart from @ApiStereotype: "
            + messages(context.getStartupFailure())));
  }

  @Test
  void aNestedStereotypesReadOnlyControllerSharingTheMarkWithAWriterStarts(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(Orders.class).withBean(AdminReport.class)
        .run(context -> assertNull(context.getStartupFailure(), () -> "AdminReport carries @ApiStereotype's"
            + " @Idempotent (through @AdminStereotype), the mark that guards Orders' POST, yet the app was refused:"
            + " markSource groups AdminReport under @AdminStereotype (the root annotation), apart from @ApiStereotype: "
            + messages(context.getStartupFailure())));
  }

  private static DispatcherServlet http(WebApplicationContext context) throws Exception {
    DispatcherServlet dispatcher = new DispatcherServlet(context);
    dispatcher.init(new MockServletConfig(context.getServletContext()));
    return dispatcher;
  }

  private static void assertOncePerKey(DispatcherServlet dispatcher, String path, AtomicInteger runs)
      throws Exception {
    GuardFilter guard = ((WebApplicationContext) dispatcher.getWebApplicationContext()).getBean(GuardFilter.class);
    MockHttpServletResponse first = post(dispatcher, guard, path, "k-1");
    MockHttpServletResponse repeat = post(dispatcher, guard, path, "k-1");
    assertEquals(200, first.getStatus(), path);
    assertEquals(first.getContentAsString(), repeat.getContentAsString(), path);
    assertEquals(1, runs.get(), path + ": the handler ran again for the same key");
  }

  private static MockHttpServletResponse post(DispatcherServlet dispatcher, GuardFilter guard, String path, String key)
      throws Exception {
    MockHttpServletRequest request = new MockHttpServletRequest("POST", path);
    request.addHeader("Idempotency-Key", key);
    request.setContentType(MediaType.TEXT_PLAIN_VALUE);
    request.setContent("a".getBytes(StandardCharsets.UTF_8));
    MockHttpServletResponse response = new MockHttpServletResponse();
    new MockFilterChain(dispatcher, guard).doFilter(request, response);
    return response;
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append('\n');
    }
    return sb.toString();
  }
}
