package dev.idem.spring.boot.tenants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemServerAutoConfiguration;
import dev.idem.spring.internal.GuardFilter;
import dev.idem.spring.server.IdempotencyCaller;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * How the starter's guard learns the caller: the app's {@link IdempotencyCaller} bean (a null
 * answer refuses a keyed request), one WARN when keyed requests come with no principal and no
 * configured caller, and the startup failures for a caller given twice, a credential as the
 * caller header, or a header that is no header name. The guard filter is driven directly, as the container would, on a guarded route.
 */
@ExtendWith(OutputCaptureExtension.class)
class GuardCallerConfigurationTest {
  private static final String WARNING = "no caller is configured";

  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemServerAutoConfiguration.class))
      .withPropertyValues("idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.routes=POST /orders");

  /** The handler: counts its runs, answers 201. */
  private static final class Orders extends HttpServlet {
    final AtomicInteger runs = new AtomicInteger();

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) {
      runs.incrementAndGet();
      resp.setStatus(201);
    }
  }

  private static MockHttpServletResponse post(GuardFilter filter, Orders orders, String key, String apiKey)
      throws Exception {
    MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");
    request.setContentType("application/json");
    request.setContent("{\"item\":\"book\"}".getBytes());
    if (key != null) {
      request.addHeader("Idempotency-Key", key);
    }
    if (apiKey != null) {
      request.addHeader("X-Api-Key", apiKey);
    }
    MockHttpServletResponse response = new MockHttpServletResponse();
    filter.doFilter(request, response, new MockFilterChain(orders));
    return response;
  }

  @Test
  void theAppsCallerBeanScopesKeysAndANullAnswerRefusesAKeyedRequest(@TempDir Path dir) {
    IdempotencyCaller tenantOfKey = r -> "sk_acme".equals(r.getHeader("X-Api-Key")) ? "acme"
        : "sk_globex".equals(r.getHeader("X-Api-Key")) ? "globex" : null;
    runner.withPropertyValues("idem.directory=" + dir).withBean(IdempotencyCaller.class, () -> tenantOfKey)
        .run(context -> {
          assertNull(context.getStartupFailure());
          GuardFilter filter = context.getBean(GuardFilter.class);
          Orders orders = new Orders();
          assertEquals(201, post(filter, orders, "k-1", "sk_acme").getStatus());
          MockHttpServletResponse globex = post(filter, orders, "k-1", "sk_globex");
          assertEquals(201, globex.getStatus());
          assertNull(globex.getHeader("Idempotent-Replayed"), "globex's first use of the key is no replay");
          assertEquals(2, orders.runs.get(), "one run per tenant");
          assertEquals("true", post(filter, orders, "k-1", "sk_acme").getHeader("Idempotent-Replayed"));
          assertEquals(2, orders.runs.get());

          MockHttpServletResponse unknown = post(filter, orders, "k-1", "sk_nobody");
          assertEquals(400, unknown.getStatus(), unknown.getContentAsString());
          assertTrue(unknown.getContentAsString().contains("idempotency-caller-missing"),
              unknown.getContentAsString());
          assertTrue(unknown.getContentAsString().contains("IdempotencyCaller"), unknown.getContentAsString());
          assertEquals(2, orders.runs.get(), "a request with no caller never runs");
        });
  }

  @Test
  void keyedRequestsWithNoPrincipalAndNoCallerLogOneWarning(@TempDir Path dir, CapturedOutput output) {
    runner.withPropertyValues("idem.directory=" + dir).run(context -> {
      GuardFilter filter = context.getBean(GuardFilter.class);
      Orders orders = new Orders();
      assertEquals(201, post(filter, orders, "w-1", null).getStatus());
      assertEquals(201, post(filter, orders, "w-2", null).getStatus());
      assertEquals(201, post(filter, orders, "w-3", null).getStatus());
      int at = output.getAll().indexOf(WARNING);
      assertTrue(at >= 0, "no warning about the shared anonymous scope: " + output.getAll());
      assertEquals(-1, output.getAll().indexOf(WARNING, at + 1), "logged more than once: " + output.getAll());
    });
  }

  @Test
  void withACallerHeaderNoWarningIsLogged(@TempDir Path dir, CapturedOutput output) {
    runner.withPropertyValues("idem.directory=" + dir, "idem.server.caller-header=X-Tenant-Id").run(context -> {
      GuardFilter filter = context.getBean(GuardFilter.class);
      Orders orders = new Orders();
      MockHttpServletResponse refused = post(filter, orders, "h-1", null);
      assertEquals(400, refused.getStatus());
      assertTrue(refused.getContentAsString().contains("X-Tenant-Id"), refused.getContentAsString());
      // An unkeyed request needs no caller: the guard answers it as before (a POST needs a key).
      MockHttpServletResponse unkeyed = post(filter, orders, null, null);
      assertTrue(unkeyed.getContentAsString().contains("idempotency-key-missing"), unkeyed.getContentAsString());
      assertEquals(0, orders.runs.get());
      assertEquals(-1, output.getAll().indexOf(WARNING), output.getAll());
    });
  }

  @Test
  void aCallerHeaderAndACallerBeanBothFailTheStartup(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir, "idem.server.caller-header=X-Tenant-Id")
        .withBean(IdempotencyCaller.class, () -> r -> "t").run(context -> {
          assertNotNull(context.getStartupFailure(), "two callers started the app");
          String m = messages(context.getStartupFailure());
          assertTrue(m.contains("idem.server.caller-header") && m.contains("IdempotencyCaller"), m);
        });
  }

  @Test
  void aCallerHeaderThatIsNoHeaderNameFailsTheStartup(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir, "idem.server.caller-header=X Tenant").run(context -> {
      assertNotNull(context.getStartupFailure(), "'X Tenant' started the app");
      String m = messages(context.getStartupFailure());
      assertTrue(m.contains("idem.server.caller-header"), m);
    });
  }

  /** The caller is stored in clear in every record: a credential header must not be it. */
  @ParameterizedTest
  @ValueSource(strings = {"X-Api-Key", "Authorization", "Cookie", "X-Auth-Token"})
  void aCallerHeaderTheSecretRuleNamesFailsTheStartup(String header, @TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir, "idem.server.caller-header=" + header).run(context -> {
      assertNotNull(context.getStartupFailure(), header + " as the caller header started the app");
      String m = messages(context.getStartupFailure());
      assertTrue(m.contains("idem.server.caller-header is " + header) && m.contains("credential")
          && m.contains("IdempotencyCaller"), m);
    });
  }

  private static String messages(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      b.append(c.getMessage()).append('\n');
    }
    return b.toString();
  }
}
