package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.internal.GuardFilter;
import dev.idem.spring.server.Idempotent;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.stereotype.Service;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.mock.web.MockServletConfig;
import org.springframework.test.util.AopTestUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.SimpleTransactionStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.WebApplicationContext;
import org.springframework.web.reactive.config.EnableWebFlux;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;

/**
 * {@code @Idempotent} works where the guard reads it: a Spring MVC handler method, or a controller
 * class for its handler methods. Anywhere else (a {@code @Service} method, as if it were AOP advice; a
 * JAX-RS resource of a Jersey app; a class with no handler method) nothing reads it, and a retry with
 * the same key runs the method again while its authors believe it guarded. Such a placement fails
 * the startup, naming the class and the method; controllers, class-level annotations on controllers
 * with helper methods, and proxied controllers keep starting and are guarded (the handler runs once
 * per key). {@code idem.server.enabled=false} turns the guard off on purpose, and the check with it.
 */
class MisplacedIdempotentTest {
  private static final AutoConfigurations IDEM = AutoConfigurations.of(IdemAutoConfiguration.class,
      IdemClientAutoConfiguration.class, IdemServerAutoConfiguration.class, IdemWebhooksAutoConfiguration.class);

  private final ApplicationContextRunner notWeb = new ApplicationContextRunner()
      .withConfiguration(IDEM).withPropertyValues("idem.outbox.enabled=false");
  private final WebApplicationContextRunner mvc = new WebApplicationContextRunner()
      .withConfiguration(IDEM).withUserConfiguration(Mvc.class).withPropertyValues("idem.outbox.enabled=false");
  private final WebApplicationContextRunner jersey = new WebApplicationContextRunner()
      .withConfiguration(IDEM).withClassLoader(new FilteredClassLoader("org.springframework.web.servlet."))
      .withPropertyValues("idem.outbox.enabled=false");

  @Configuration(proxyBeanMethods = false)
  @EnableWebMvc
  static class Mvc {}

  /** Users expect AOP: a service method marked @Idempotent. Nothing reads it. */
  @Service
  static class Payments {
    final AtomicInteger charges = new AtomicInteger();

    @Idempotent
    public String charge(String order) {
      charges.incrementAndGet();
      return "charged " + order;
    }
  }

  /** A Jersey resource: JAX-RS serves it, not Spring MVC, so the guard never sees its requests. */
  @Component
  @Path("/orders")
  static class JaxRsOrders {
    @POST
    @Idempotent
    public String create(String order) {
      return "created " + order;
    }
  }

  /** Class-level on a class without a single handler method. */
  @Component
  @Idempotent
  static class Ledger {
    public void book(String entry) {}
  }

  /** Marked on the interface, as Spring MVC would read an interface's handler annotation. */
  interface Refunds {
    @Idempotent
    String refund(String order);
  }

  @Service
  static class RefundService implements Refunds {
    @Override
    public String refund(String order) {
      return "refunded " + order;
    }
  }

  /** The same service behind a JDK proxy (interface-based @Transactional): the check sees its class. */
  interface Invoices {
    String invoice(String order);
  }

  @Service
  static class InvoiceService implements Invoices {
    @Override
    @Transactional
    @Idempotent
    public String invoice(String order) {
      return "invoiced " + order;
    }
  }

  @RestController
  static class Orders {
    final AtomicInteger runs = new AtomicInteger();

    @PostMapping("/orders")
    @Idempotent
    String create(@RequestBody String order) {
      return "order " + order + " #" + runs.incrementAndGet();
    }
  }

  /** Class-level: guards its handler methods; its helper methods are not handlers and are fine. */
  @RestController
  @Idempotent
  static class ClassLevelOrders {
    final AtomicInteger runs = new AtomicInteger();

    @PostMapping("/class-orders")
    String create(@RequestBody String order) {
      return describe(order) + " #" + runs.incrementAndGet();
    }

    public String describe(String order) {
      return "order " + order;
    }
  }

  /**
   * Class-level on a controller whose handlers take GET, HEAD and OPTIONS only: a class's mark
   * guards none of them (they read, and are answered fresh), so it guards nothing.
   */
  @RestController
  @Idempotent
  static class ReadOnlyPrices {
    @GetMapping("/ro-price")
    String price() {
      return "price";
    }

    @RequestMapping(path = "/ro-price-meta", method = {RequestMethod.HEAD, RequestMethod.OPTIONS})
    String meta() {
      return "meta";
    }
  }

  /** Class-level on a controller whose mapping names no method: it takes POST too, which the mark guards. */
  @RestController
  @Idempotent
  static class AnyMethodPrices {
    final AtomicInteger runs = new AtomicInteger();

    @RequestMapping("/any-price")
    String price() {
      return "price #" + runs.incrementAndGet();
    }
  }

  /** A GET handler of a class mapped to POST: Spring MVC combines the two, so it takes POST too. */
  @RestController
  @Idempotent
  @RequestMapping(path = "/class-post", method = RequestMethod.POST)
  static class ClassMappedToPost {
    final AtomicInteger runs = new AtomicInteger();

    @GetMapping
    String price() {
      return "price #" + runs.incrementAndGet();
    }
  }

  /** Read-only mappings declared on an interface; the implementation behind a JDK proxy carries the class mark. */
  @RestController
  interface PricesApi {
    @GetMapping("/proxied-price")
    String price();
  }

  @Idempotent
  @Transactional
  static class ProxiedReadOnlyPrices implements PricesApi {
    @Override
    public String price() {
      return "price";
    }
  }

  /** A CGLIB proxy (class-based @Transactional): the bean's class is a subclass made at runtime. */
  @RestController
  static class TransactionalOrders {
    final AtomicInteger runs = new AtomicInteger();

    @PostMapping("/tx-orders")
    @Idempotent
    @Transactional
    public String create(@RequestBody String order) {
      return "order " + order + " #" + runs.incrementAndGet();
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableTransactionManagement(proxyTargetClass = true)
  static class ClassProxies {
    @Bean
    PlatformTransactionManager transactionManager() {
      return new NoTransactions();
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableTransactionManagement(proxyTargetClass = false)
  static class InterfaceProxies {
    @Bean
    PlatformTransactionManager transactionManager() {
      return new NoTransactions();
    }
  }

  /** Enough of a transaction manager for @Transactional's proxy to run. */
  static final class NoTransactions implements PlatformTransactionManager {
    @Override
    public TransactionStatus getTransaction(TransactionDefinition definition) {
      return new SimpleTransactionStatus();
    }

    @Override
    public void commit(TransactionStatus status) {}

    @Override
    public void rollback(TransactionStatus status) {}
  }

  @Test
  void aServiceMethodMarkedIdempotentFailsTheStartup(@TempDir java.nio.file.Path dir) {
    notWeb.withPropertyValues("idem.directory=" + dir).withBean(Payments.class).run(context -> {
      String m = messages(context.getStartupFailure());
      assertTrue(m.contains(Payments.class.getName() + ".charge"), m);
      assertTrue(m.contains("Spring MVC") && m.contains("idem.server.routes"), m);
    });
    mvc.withPropertyValues("idem.directory=" + dir).withBean(Payments.class).run(context -> {
      String m = messages(context.getStartupFailure());
      assertTrue(m.contains(Payments.class.getName() + ".charge"), m);
    });
  }

  /** A Jersey app (no Spring MVC on the class path) with a marked JAX-RS resource. */
  @Test
  void aJaxRsResourceMarkedIdempotentFailsTheStartup(@TempDir java.nio.file.Path dir) {
    jersey.withPropertyValues("idem.directory=" + dir).withBean(JaxRsOrders.class).run(context -> {
      String m = messages(context.getStartupFailure());
      assertTrue(m.contains(JaxRsOrders.class.getName() + ".create"), m);
      assertTrue(m.contains("IdempotencyFilter"), m);
    });
  }

  /**
   * A Jersey app's {@code @RestController}: a request-mapping method of a controller, but no Spring
   * MVC mapping runs in this servlet app, so no guard reads the mark and a retried request runs the
   * method again. The rule that lets a controller pass where no mapping runs is for contexts that
   * serve no requests (webEnvironment = NONE, a hierarchy's parent), not for a servlet app.
   */
  @Test
  void aControllerMarkedIdempotentInAServletAppWithoutSpringMvcFailsTheStartup(@TempDir java.nio.file.Path dir) {
    jersey.withPropertyValues("idem.directory=" + dir).withBean(Orders.class).withBean(ClassLevelOrders.class)
        .run(context -> {
          String m = messages(context.getStartupFailure());
          assertTrue(m.contains(Orders.class.getName() + ".create"), m);
          assertTrue(m.contains(ClassLevelOrders.class.getName() + ".create"), m);
          assertTrue(m.contains("without Spring MVC") && m.contains("idem.server.enabled=false"), m);
        });
    // The way out: the guard turned off on purpose.
    jersey.withPropertyValues("idem.directory=" + dir, "idem.server.enabled=false").withBean(Orders.class)
        .run(context -> assertNull(context.getStartupFailure()));
  }

  /**
   * Spring MVC on the class path, but no Spring MVC mapping in the context (its auto-configuration
   * excluded, or a servlet app that never configured it): the guard's filter runs and guards
   * {@code idem.server.routes} by path, but it finds {@code @Idempotent} handlers only through that
   * mapping, so the mark is read nowhere.
   */
  @Test
  void aControllerMarkedIdempotentInAServletAppWithoutAnMvcMappingFailsTheStartup(@TempDir java.nio.file.Path dir) {
    new WebApplicationContextRunner().withConfiguration(IDEM)
        .withPropertyValues("idem.outbox.enabled=false", "idem.directory=" + dir).withBean(Orders.class)
        .run(context -> {
          String m = messages(context.getStartupFailure());
          assertTrue(m.contains(Orders.class.getName() + ".create"), m);
          assertTrue(m.contains("idem.server.enabled=false"), m);
        });
  }

  /**
   * Spring MVC's own mapping absent (its auto-configuration excluded), but another
   * RequestMappingHandlerMapping in the context that takes no application controller (as Spring Boot
   * Actuator's endpoint mapping): the controller's mark is refused as in the test above, and the
   * refusal says why (no mapping registered this controller's request mapping) instead of calling a
   * {@code @PostMapping} method of a {@code @RestController} "not a handler method", which sends its
   * author looking at the method rather than at the missing Spring MVC configuration.
   */
  @Test
  void aControllerNoMappingRegisteredIsRefusedAsSuchWhereAnotherMappingRuns(@TempDir java.nio.file.Path dir) {
    new WebApplicationContextRunner().withConfiguration(IDEM)
        .withPropertyValues("idem.outbox.enabled=false", "idem.directory=" + dir)
        .withBean(EndpointsOnlyMapping.class).withBean(Orders.class).withBean(Ledger.class)
        .run(context -> {
          String m = messages(context.getStartupFailure());
          assertTrue(m.contains(Orders.class.getName() + ".create (a controller's request mapping that no Spring MVC"
              + " mapping registered)"), m);
          assertFalse(m.contains(Orders.class.getName() + ".create (not a handler method)"), m);
          assertTrue(m.contains("auto-configuration"), m);
          // A mark that is misplaced whatever the mappings keeps its wording.
          assertTrue(m.contains(Ledger.class.getName() + " (a class with no handler method)"), m);
        });
  }

  /** A mapping of its own endpoints only, as Actuator's: it registers no application controller. */
  static class EndpointsOnlyMapping extends org.springframework.web.servlet.mvc.method.annotation
      .RequestMappingHandlerMapping {
    @Override
    protected boolean isHandler(Class<?> beanType) {
      return false;
    }
  }

  /**
   * A hierarchy (SpringApplicationBuilder.child): the parent serves no requests and keeps its rule;
   * the servlet child, whose Spring MVC mapping serves the controller, guards it.
   */
  @Test
  void aHierarchyWhoseServletChildRunsSpringMvcStartsAndIsGuarded(@TempDir java.nio.file.Path dir) {
    notWeb.withPropertyValues("idem.directory=" + dir.resolve("parent")).withBean(Orders.class).run(parent -> {
      assertNull(parent.getStartupFailure());
      mvc.withParent(parent).withPropertyValues("idem.directory=" + dir.resolve("child"))
          .withBean(ClassLevelOrders.class).run(child -> {
            assertNull(child.getStartupFailure());
            assertOncePerKey(http(child), "/class-orders", () -> child.getBean(ClassLevelOrders.class).runs.get());
          });
    });
  }

  @Test
  void aMarkedClassWithoutHandlerMethodsFailsTheStartup(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(Ledger.class).run(context -> {
      String m = messages(context.getStartupFailure());
      assertTrue(m.contains(Ledger.class.getName()) && m.contains("no handler method"), m);
    });
  }

  @Test
  void aMarkOnAnInterfaceMethodCountsAsSpringMvcWouldReadIt(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(RefundService.class).run(context -> {
      String m = messages(context.getStartupFailure());
      assertTrue(m.contains(RefundService.class.getName() + ".refund"), m);
    });
  }

  @Test
  void aServiceBehindAJdkProxyIsCheckedByItsOwnClass(@TempDir java.nio.file.Path dir) {
    notWeb.withPropertyValues("idem.directory=" + dir).withUserConfiguration(InterfaceProxies.class)
        .withBean(InvoiceService.class).run(context -> {
          String m = messages(context.getStartupFailure());
          assertTrue(m.contains(InvoiceService.class.getName() + ".invoice"), m);
        });
    // The control: the proxy really is a JDK proxy, whose class does not carry the annotation.
    notWeb.withPropertyValues("idem.directory=" + dir, "idem.server.enabled=false")
        .withUserConfiguration(InterfaceProxies.class).withBean(InvoiceService.class).run(context -> {
          assertNull(context.getStartupFailure());
          assertTrue(Proxy.isProxyClass(context.getBean(Invoices.class).getClass()));
        });
  }

  /**
   * A class mark none of whose handlers takes an unsafe method guards no request, in a Spring MVC
   * app (its mapping's methods) as in a context without one (the mapping annotations' methods).
   */
  @Test
  void aClassMarkOnAControllerThatTakesOnlySafeMethodsFailsTheStartup(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir.resolve("mvc")).withBean(ReadOnlyPrices.class).run(context -> {
      String m = messages(context.getStartupFailure());
      assertTrue(m.contains("[" + ReadOnlyPrices.class.getName() + "] guards nothing")
          && m.contains("no handler of it takes one"), m);
    });
    notWeb.withPropertyValues("idem.directory=" + dir.resolve("not-web")).withBean(ReadOnlyPrices.class)
        .run(context -> {
          String m = messages(context.getStartupFailure());
          assertTrue(m.contains("[" + ReadOnlyPrices.class.getName() + "] guards nothing"), m);
        });
  }

  /** Behind a JDK proxy the mapping sees the $Proxy class; the mark is the implementation's. */
  @Test
  void aClassMarkOnAJdkProxiedControllerThatTakesOnlySafeMethodsFailsTheStartup(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withUserConfiguration(InterfaceProxies.class)
        .withBean(ProxiedReadOnlyPrices.class).run(context -> {
          String m = messages(context.getStartupFailure());
          assertTrue(m.contains("[" + ProxiedReadOnlyPrices.class.getName() + "] guards nothing"), m);
        });
  }

  /** A mapping without a method condition, or combined with a class's POST, takes POST: guarded, kept. */
  @Test
  void aClassMarkWithAHandlerThatMayTakeAnUnsafeMethodStartsAndGuardsIt(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir.resolve("mvc")).withBean(AnyMethodPrices.class)
        .withBean(ClassMappedToPost.class).run(context -> {
          assertNull(context.getStartupFailure());
          Http http = http(context);
          assertOncePerKey(http, "/any-price", () -> context.getBean(AnyMethodPrices.class).runs.get());
          assertOncePerKey(http, "/class-post", () -> context.getBean(ClassMappedToPost.class).runs.get());
        });
    notWeb.withPropertyValues("idem.directory=" + dir.resolve("not-web")).withBean(AnyMethodPrices.class)
        .withBean(ClassMappedToPost.class).run(context -> assertNull(context.getStartupFailure()));
  }

  /** The guard switched off on purpose: no guard reads any annotation, and none is refused. */
  @Test
  void theServerTurnedOffStartsWithMisplacedAnnotations(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir, "idem.server.enabled=false")
        .withBean(Payments.class).withBean(Ledger.class).run(context -> {
          assertNull(context.getStartupFailure());
          assertEquals("charged a", context.getBean(Payments.class).charge("a"));
        });
  }

  @Test
  void controllersStartAndAreGuardedOncePerKey(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withBean(Orders.class).withBean(ClassLevelOrders.class)
        .run(context -> {
          assertNull(context.getStartupFailure());
          Http http = http(context);
          assertOncePerKey(http, "/orders", () -> context.getBean(Orders.class).runs.get());
          assertOncePerKey(http, "/class-orders", () -> context.getBean(ClassLevelOrders.class).runs.get());
        });
  }

  @Test
  void aCglibProxiedControllerStartsAndIsGuarded(@TempDir java.nio.file.Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir).withUserConfiguration(ClassProxies.class)
        .withBean(TransactionalOrders.class).run(context -> {
          assertNull(context.getStartupFailure());
          TransactionalOrders orders = context.getBean(TransactionalOrders.class);
          assertTrue(AopUtils.isCglibProxy(orders), "the controller is a CGLIB proxy");
          // The proxy's own fields are not the target's: count the target's runs.
          TransactionalOrders target = AopTestUtils.getTargetObject(orders);
          assertOncePerKey(http(context), "/tx-orders", () -> target.runs.get());
        });
  }

  /**
   * A reactive app: WebFlux's mapping, found by name, makes a WebFlux controller's method a handler,
   * so the refusal that names it is the reactive one (no guard runs there); a service method is
   * misplaced there as anywhere.
   */
  @Test
  void aReactiveAppTellsAHandlerFromAMisplacedMethod(@TempDir java.nio.file.Path dir) {
    ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner().withConfiguration(IDEM)
        .withUserConfiguration(Flux.class).withPropertyValues("idem.outbox.enabled=false", "idem.directory=" + dir);
    reactive.withBean(Orders.class).run(context -> {
      String m = messages(context.getStartupFailure());
      assertTrue(m.contains("reactive (WebFlux) app") && m.contains(Orders.class.getName() + ".create"), m);
      assertFalse(m.contains("not a handler method"), m);
    });
    reactive.withBean(Payments.class).run(context -> {
      String m = messages(context.getStartupFailure());
      assertTrue(m.contains(Payments.class.getName() + ".charge (not a handler method)"), m);
    });
  }

  @Configuration(proxyBeanMethods = false)
  @EnableWebFlux
  static class Flux {}

  /** A @SpringBootTest(webEnvironment = NONE) of a Spring MVC app: its controllers are handlers still. */
  @Test
  void aNonWebContextWithMarkedControllersStarts(@TempDir java.nio.file.Path dir) {
    notWeb.withPropertyValues("idem.directory=" + dir).withBean(Orders.class).withBean(ClassLevelOrders.class)
        .run(context -> assertNull(context.getStartupFailure()));
  }

  /** The guard's filter before Spring MVC's dispatcher, as the container chains them. */
  private static Http http(WebApplicationContext context) throws Exception {
    DispatcherServlet dispatcher = new DispatcherServlet(context);
    dispatcher.init(new MockServletConfig(context.getServletContext()));
    return new Http(context.getBean(GuardFilter.class), dispatcher);
  }

  record Http(GuardFilter guard, DispatcherServlet dispatcher) {
    MockHttpServletResponse post(String path, String key) throws Exception {
      MockHttpServletRequest request = new MockHttpServletRequest("POST", path);
      request.addHeader("Idempotency-Key", key);
      request.setContentType(MediaType.TEXT_PLAIN_VALUE);
      request.setContent("a".getBytes(StandardCharsets.UTF_8));
      MockHttpServletResponse response = new MockHttpServletResponse();
      new MockFilterChain(dispatcher, guard).doFilter(request, response);
      return response;
    }
  }

  /** Two requests with one key and one with another: the handler runs once per key, the repeat replays. */
  private static void assertOncePerKey(Http http, String path, IntSupplier runs) throws Exception {
    MockHttpServletResponse first = http.post(path, "k-1");
    MockHttpServletResponse repeat = http.post(path, "k-1");
    assertEquals(200, first.getStatus(), path);
    assertEquals(first.getContentAsString(), repeat.getContentAsString(), path);
    assertEquals("true", repeat.getHeader("Idempotent-Replayed"), path);
    assertEquals(1, runs.getAsInt(), path + ": the handler ran again for the same key");
    http.post(path, "k-2");
    assertEquals(2, runs.getAsInt(), path + ": another key runs the handler");
  }

  private static String messages(Throwable t) {
    assertNotNull(t, "the app started");
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append('\n');
    }
    return sb.toString();
  }
}
