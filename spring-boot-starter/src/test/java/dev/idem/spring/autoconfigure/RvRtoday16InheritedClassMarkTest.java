package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

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
 * Review of c6eb41ac (class mark on a safe-only controller refused at startup): the refusal also
 * hits a class mark the controller only INHERITS, from a shared base class or a composed
 * stereotype annotation, which the guard reads by find semantics and which apps use to guard the
 * writes of every controller at once. Such an app starts today and guards its write controllers;
 * after c6eb41ac it fails to start as soon as one read-only controller (health info, a catalog)
 * shares the base or the stereotype, and the message names that read-only controller
 * ("@Idempotent on the controller class [...Catalog] guards nothing ... remove the class's mark"),
 * a class that carries no mark of its own and cannot remove it without unguarding every other
 * controller. Where: {@code IdempotentPlacement.refuseMisplaced}, the new
 * {@code else if (marked.onClass() && !handlers.hasUnsafeHandler(...))} branch, with
 * {@code marked.onClass()} computed by {@code AnnotatedElementUtils.hasAnnotation} (find
 * semantics: superclasses, interfaces, meta-annotations). The mark the author believes guards
 * something (on the base / the stereotype) does guard the write controllers, so nothing is
 * misplaced; only a mark declared on the safe-only controller itself guards nothing.
 */
class RvRtoday16InheritedClassMarkTest {
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
