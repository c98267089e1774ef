package dev.idem.spring.boot.tenants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemServerAutoConfiguration;
import dev.idem.spring.internal.GuardFilter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * Review (caller): {@code idem.server.caller-header} reads the header with
 * {@code request.getHeader(name)}, the first of its values. A request that carries the caller
 * header twice (a client's own value, then the one a gateway appends, as Spring Cloud Gateway's
 * {@code AddRequestHeader} and Envoy's default {@code append} do) is scoped by the first, the
 * client's: it is replayed another tenant's stored answer. The guard refuses a doubled
 * Idempotency-Key 400 for exactly this reason ("the header twice, two keys joined with a comma as a
 * proxy may join them"); a doubled caller header, which decides whose records a request reads, is
 * taken silently.
 */
class CallerHeaderTwiceReviewTest {
  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemServerAutoConfiguration.class))
      .withPropertyValues("idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.routes=POST /orders",
          "idem.server.caller-header=X-Tenant-Id");

  /** The handler: answers with the tenant the app itself sees (the gateway's value, the last). */
  private static final class Orders extends HttpServlet {
    final List<String> ranFor = Collections.synchronizedList(new ArrayList<>());

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      List<String> values = Collections.list(req.getHeaders("X-Tenant-Id"));
      String tenant = values.get(values.size() - 1);
      ranFor.add(tenant);
      resp.setStatus(201);
      resp.setContentType("application/json");
      resp.getWriter().write("{\"tenant\":\"" + tenant + "\",\"card\":\"secret-of-" + tenant + "\"}");
    }
  }

  private static MockHttpServletResponse post(GuardFilter filter, Orders orders, String key, String... tenants)
      throws Exception {
    MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");
    request.setContentType("application/json");
    request.setContent("{\"item\":\"book\"}".getBytes());
    request.addHeader("Idempotency-Key", key);
    for (String t : tenants) {
      request.addHeader("X-Tenant-Id", t);
    }
    MockHttpServletResponse response = new MockHttpServletResponse();
    filter.doFilter(request, response, new MockFilterChain(orders));
    return response;
  }

  @Test
  void aCallerHeaderGivenTwiceIsRefusedNotScopedByTheFirstValue(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir).run(context -> {
      GuardFilter filter = context.getBean(GuardFilter.class);
      Orders orders = new Orders();
      // globex's own order, through the gateway.
      assertEquals(201, post(filter, orders, "order-7", "globex").getStatus());

      // A client of acme's sends "X-Tenant-Id: globex" itself; acme's gateway appends its own value.
      MockHttpServletResponse doubled = post(filter, orders, "order-7", "globex", "acme");

      assertEquals(400, doubled.getStatus(), "two caller values must be refused, not scoped by the first;"
          + " got " + doubled.getStatus() + " replayed=" + doubled.getHeader("Idempotent-Replayed") + " body="
          + doubled.getContentAsString());
      assertNull(doubled.getHeader("Idempotent-Replayed"), "acme's client was replayed globex's answer: "
          + doubled.getContentAsString());
    });
  }
}
