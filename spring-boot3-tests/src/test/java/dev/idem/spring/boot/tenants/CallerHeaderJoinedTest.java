package dev.idem.spring.boot.tenants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemServerAutoConfiguration;
import dev.idem.spring.internal.GuardFilter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * {@code idem.server.caller-header} holding two values a proxy joined with a comma names two
 * callers, as the header given twice does (CallerHeaderTwiceReviewTest): refused 400 before
 * anything runs, every time, and the refusal says why without echoing the values.
 */
class CallerHeaderJoinedTest {
  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemServerAutoConfiguration.class))
      .withPropertyValues("idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.routes=POST /orders",
          "idem.server.caller-header=X-Tenant-Id");

  private static final class Orders extends HttpServlet {
    final AtomicInteger runs = new AtomicInteger();

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) {
      runs.incrementAndGet();
      resp.setStatus(201);
    }
  }

  private static MockHttpServletResponse post(GuardFilter filter, Orders orders, String tenant) throws Exception {
    MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");
    request.setContentType("application/json");
    request.setContent("{\"item\":\"book\"}".getBytes());
    request.addHeader("Idempotency-Key", "order-9");
    request.addHeader("X-Tenant-Id", tenant);
    MockHttpServletResponse response = new MockHttpServletResponse();
    filter.doFilter(request, response, new MockFilterChain(orders));
    return response;
  }

  @Test
  void aJoinedCallerHeaderIsRefusedAndNothingRuns(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir).run(context -> {
      GuardFilter filter = context.getBean(GuardFilter.class);
      Orders orders = new Orders();
      for (int attempt = 0; attempt < 2; attempt++) {
        MockHttpServletResponse r = post(filter, orders, "globex, acme");
        assertEquals(400, r.getStatus(), r.getContentAsString());
        assertNull(r.getHeader("Retry-After"));
        String body = r.getContentAsString();
        assertTrue(body.contains("idempotency-caller-missing") && body.contains("X-Tenant-Id")
            && body.contains("comma"), body);
        assertFalse(body.contains("globex"), "the values are not echoed: " + body);
      }
      assertEquals(0, orders.runs.get());
      // The tenant alone is served as before.
      assertEquals(201, post(filter, orders, "acme").getStatus());
      assertEquals(1, orders.runs.get());
    });
  }
}
