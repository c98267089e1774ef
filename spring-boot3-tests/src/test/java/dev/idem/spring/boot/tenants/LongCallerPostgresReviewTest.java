package dev.idem.spring.boot.tenants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemServerAutoConfiguration;
import dev.idem.spring.internal.GuardFilter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.nio.file.Path;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * Review (caller): the caller now comes from {@code idem.server.caller-header} (any header value,
 * up to the container's 8 KiB) or the app's {@code IdempotencyCaller}, and nothing bounds its
 * length. On PostgreSQL (idem.server.store=datasource) the record's primary key
 * (caller, route, idem_key) is a btree, whose entries may not exceed 2704 bytes: a keyed request
 * whose caller is a few KiB fails the claim ("index row size ... exceeds btree version 4 maximum
 * 2704"), and the guard answers 503 store-unavailable with Retry-After: 1, "retry later", on every
 * retry, forever. The guard bounds the key (255) for this kind of reason and refuses an unstorable
 * caller (NUL, unpaired surrogate) 400 precisely so that a permanent condition is not a 503 on every
 * retry (docs/server.md); an over-long caller should be refused the same way, before the store.
 */
@ExtendWith(PostgresExtension.class)
class LongCallerPostgresReviewTest {
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
    request.addHeader("Idempotency-Key", "order-long-caller-1");
    request.addHeader("X-Tenant-Id", tenant);
    MockHttpServletResponse response = new MockHttpServletResponse();
    filter.doFilter(request, response, new MockFilterChain(orders));
    return response;
  }

  @Test
  void aCallerTooLongForTheStoreIsRefused400NotAnsweredRetryLaterForever(PgDatabase pg, @TempDir Path dir) {
    String url = "jdbc:postgresql://127.0.0.1:" + pg.cluster().port() + "/" + pg.name();
    Random random = new Random(7);
    StringBuilder tenant = new StringBuilder();
    for (int i = 0; i < 4000; i++) {
      tenant.append((char) ('a' + random.nextInt(26)));
    }
    new WebApplicationContextRunner()
        // The app's DataSource as a bean, not Boot's DataSource auto-configuration: this source runs
        // under Boot 4 too (spring-boot4-tests), where that class moved to another package.
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemServerAutoConfiguration.class))
        .withBean(DataSource.class, () -> {
          PGSimpleDataSource ds = new PGSimpleDataSource();
          ds.setURL(url);
          ds.setUser("postgres");
          return ds;
        })
        .withPropertyValues("idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.routes=POST /orders",
            "idem.server.caller-header=X-Tenant-Id", "idem.server.store=datasource", "idem.directory=" + dir)
        .run(context -> {
          GuardFilter filter = context.getBean(GuardFilter.class);
          Orders orders = new Orders();
          for (int attempt = 1; attempt <= 2; attempt++) {
            MockHttpServletResponse r = post(filter, orders, tenant.toString());
            assertEquals(400, r.getStatus(), "attempt " + attempt + ": a caller no store keeps must be refused 400,"
                + " got " + r.getStatus() + " Retry-After=" + r.getHeader("Retry-After") + " " + r.getContentAsString());
            assertNull(r.getHeader("Retry-After"), "a retry can never succeed");
          }
          assertEquals(0, orders.runs.get());
        });
  }
}
