package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.internal.GuardFilter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * A servlet web app without Spring MVC (a Jersey app: spring-web and a servlet container, no
 * {@code org.springframework.web.servlet} on the class path) runs no guard: the guard's
 * auto-configuration needs Spring MVC's DispatcherServlet and handler mappings to find what it
 * guards. An {@code idem.server.*} setting there says the app believes its endpoints are guarded, so
 * it must fail the startup naming the property, as in a reactive app, rather than start and let a
 * retried keyed request run its handler again. {@code idem.server.enabled=false} is the way out, an
 * app that sets no {@code idem.server.*} key starts as before, the webhook endpoints (a plain servlet
 * filter) still serve such an app, and an app that serves no web requests is not refused (a
 * {@code @SpringBootTest(webEnvironment = NONE)} of it, the parent of a context hierarchy).
 */
class ServletAppWithoutMvcServerSettingsTest {
  private static final AutoConfigurations IDEM = AutoConfigurations.of(IdemAutoConfiguration.class,
      IdemClientAutoConfiguration.class, IdemServerAutoConfiguration.class, IdemWebhooksAutoConfiguration.class);
  /** What spring-webmvc holds: a Jersey app does not have it. */
  private static final FilteredClassLoader WITHOUT_MVC = new FilteredClassLoader("org.springframework.web.servlet.");

  private final WebApplicationContextRunner jersey = new WebApplicationContextRunner()
      .withConfiguration(IDEM).withClassLoader(WITHOUT_MVC).withPropertyValues("idem.outbox.enabled=false");
  private final WebApplicationContextRunner mvc = new WebApplicationContextRunner()
      .withConfiguration(IDEM).withPropertyValues("idem.outbox.enabled=false");
  private final ApplicationContextRunner notWebWithoutMvc = new ApplicationContextRunner()
      .withConfiguration(IDEM).withClassLoader(WITHOUT_MVC).withPropertyValues("idem.outbox.enabled=false");

  /** Every key of idem.server but enabled=false (the way out), relaxed spellings included. */
  @ParameterizedTest
  @ValueSource(strings = {"idem.server.routes=POST /orders", "idem.server.routes[0]=POST /orders",
      "idem.server.key-header=X-Request-Key", "idem.server.store=datasource", "idem.server.retention=1h",
      "idem.server.transactional=true", "idem.server.in-flight-wait=2s", "idem.server.mismatch-status=409",
      "idem.server.max-buffered-body-bytes=1024", "idem.server.caller-header=X-Tenant-Id",
      "idem.server.enabled=true", "idem.server.keyHeader=X-Request-Key", "idem.server.in_flight_wait=2s"})
  void aServerSettingInAServletAppWithoutSpringMvcFailsTheStartup(String setting, @TempDir Path dir) {
    jersey.withPropertyValues("idem.directory=" + dir, setting).run(context -> {
      Throwable failure = context.getStartupFailure();
      assertNotNull(failure, "a servlet app without Spring MVC with " + setting + " started, and no guard reads it");
      String m = messages(failure);
      assertTrue(m.contains(canonical(setting)), m);
      assertTrue(m.contains("without Spring MVC") && m.contains("idem.server.enabled=false"), m);
    });
  }

  @Test
  void theMessageNamesEverySetKey(@TempDir Path dir) {
    jersey.withPropertyValues("idem.directory=" + dir, "idem.server.routes=POST /orders",
        "idem.server.key-header=X-Request-Key").run(context -> {
          String m = messages(context.getStartupFailure());
          assertTrue(m.contains("idem.server.routes [POST /orders]") && m.contains("idem.server.key-header")
              && m.contains(" are set"), m);
        });
  }

  @Test
  void theServerTurnedOffStartsWithItsSettings(@TempDir Path dir) {
    jersey.withPropertyValues("idem.directory=" + dir, "idem.server.enabled=false",
        "idem.server.key-header=X-Request-Key", "idem.server.routes=POST /orders").run(context -> {
          assertNull(context.getStartupFailure());
          assertFalse(context.containsBean("idemGuardFilter"));
        });
  }

  @Test
  void anAppWithoutServerSettingsStartsAsBefore(@TempDir Path dir) {
    jersey.withPropertyValues("idem.directory=" + dir, "idem.client.untagged-policy=reject").run(context -> {
      assertNull(context.getStartupFailure());
      assertFalse(context.containsBean("idemGuardFilter"));
      assertTrue(context.containsBean("idemExecutor"));
    });
  }

  /** The webhook endpoints are a servlet filter of their own: they serve an app without Spring MVC. */
  @Test
  void webhookSourcesStillServeAServletAppWithoutSpringMvc(@TempDir Path dir) {
    jersey.withPropertyValues("idem.directory=" + dir, "idem.webhooks.sources.payments.scheme=stripe",
        "idem.webhooks.sources.payments.secrets[0]=whsec-test").run(context -> {
          assertNull(context.getStartupFailure());
          assertTrue(context.containsBean("idemWebhookFilter"));
        });
  }

  /** A @SpringBootTest(webEnvironment = NONE) of the Jersey app, or a hierarchy's parent: not refused. */
  @Test
  void anAppWithoutAWebServerStartsWithTheServerSettings(@TempDir Path dir) {
    notWebWithoutMvc.withPropertyValues("idem.directory=" + dir, "idem.server.routes=POST /orders",
        "idem.server.key-header=X-Request-Key").run(context -> {
          assertNull(context.getStartupFailure());
          assertFalse(context.containsBean("idemGuardFilter"));
        });
  }

  /** Control: with Spring MVC, the same settings start the guard. */
  @Test
  void aSpringMvcAppStartsItsGuardWithTheSettings(@TempDir Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir, "idem.server.key-header=X-Request-Key",
        "idem.server.enabled=true").run(context -> {
          assertNull(context.getStartupFailure());
          assertTrue(context.containsBean("idemGuardFilter"));
        });
  }

  /**
   * Spring MVC on the class path but no Spring MVC mapping (its auto-configuration excluded): the
   * guard's filter is made, and a route is a path that it guards whatever servlet serves it, so
   * the settings are served and not refused. (An {@code @Idempotent} mark is: see
   * MisplacedIdempotentTest.)
   */
  @Test
  void aRouteGuardsAServletThatSpringMvcDoesNotServe(@TempDir Path dir) {
    mvc.withPropertyValues("idem.directory=" + dir, "idem.server.routes=POST /orders").run(context -> {
      assertNull(context.getStartupFailure());
      AtomicInteger runs = new AtomicInteger();
      HttpServlet jaxRs = new HttpServlet() {
        @Override
        protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
          response.getWriter().write("created #" + runs.incrementAndGet());
        }
      };
      GuardFilter guard = context.getBean(GuardFilter.class);
      List<String> answers = new ArrayList<>();
      for (String key : List.of("k-1", "k-1", "k-2")) {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");
        request.addHeader("Idempotency-Key", key);
        request.setContentType("text/plain");
        request.setContent("a".getBytes(StandardCharsets.UTF_8));
        MockHttpServletResponse response = new MockHttpServletResponse();
        new MockFilterChain(jaxRs, guard).doFilter(request, response);
        answers.add(response.getContentAsString());
      }
      assertEquals(List.of("created #1", "created #1", "created #2"), answers);
      assertEquals(2, runs.get(), "the servlet ran once per key");
    });
  }

  /** The key as the message names it: idem.server.in-flight-wait for in_flight_wait, routes for routes[0]. */
  private static String canonical(String setting) {
    String key = setting.substring(0, setting.indexOf('=')).replaceAll("\\[\\d+]$", "");
    return switch (key) {
      case "idem.server.keyHeader" -> "idem.server.key-header";
      case "idem.server.in_flight_wait" -> "idem.server.in-flight-wait";
      default -> key;
    };
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append('\n');
    }
    return sb.toString();
  }
}
