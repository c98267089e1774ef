package dev.idem.spring.boot.tenants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.RecordQuery;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemServerAutoConfiguration;
import dev.idem.spring.internal.GuardFilter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * Review rsecrets: {@code idem.server.caller-header} is taken whatever header it names, including
 * one that Idem's own secret rule calls a credential ({@code X-Api-Key}, {@code Authorization}).
 * Scoping idempotency keys by API key is the usual choice (Stripe scopes keys per API key; the
 * starter's own tests map {@code X-Api-Key} to a tenant with an {@code IdempotencyCaller}), and
 * {@code caller-header=X-Api-Key} is the one-line way to say it. The guard then stores the header's
 * value verbatim as the record's caller: the API key sits in clear in the guard store (the
 * {@code caller} column of guard.db / the PostgreSQL table), is printed by {@code idem guard list},
 * and is in every log line that prints a {@code Claim} (its toString holds the {@code RecordId}
 * record, caller included: "Refused a stale completion of ...", "Renewing the lease of ... failed").
 *
 * <p>Every other place where a header could carry a credential into a store (journaled request
 * headers, stored response headers, replay headers) applies {@code RequestSnapshot.isSecretByDefault};
 * this one does not ({@code IdemProperties.Server} checks only that the name is an HTTP token,
 * {@code CallerHeader.apply} returns the raw value). docs/server.md says "the caller id is stored:
 * make it an account or tenant id, never a credential", yet nothing stops the configuration that
 * stores a credential. Either refusing such a header at startup (naming the property and pointing
 * to an {@code IdempotencyCaller} bean that maps the key to a tenant) or storing a digest instead
 * of the value would pass; storing it in clear does not.
 */
class RvRsecretsCallerHeaderCredentialStoredTest {
  private static final String API_KEY = "sk_live_rvRsecretsCallerHeader0123456789";

  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemServerAutoConfiguration.class))
      .withPropertyValues("idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.routes=POST /orders",
          "idem.server.caller-header=X-Api-Key");

  private static final class Orders extends HttpServlet {
    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) {
      resp.setStatus(201);
    }
  }

  @Test
  void anApiKeyNamedAsTheCallerHeaderIsNotStoredInClear(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir).run(context -> {
      if (context.getStartupFailure() != null) {
        return; // refused at startup: the credential can never be stored
      }
      GuardFilter filter = context.getBean(GuardFilter.class);
      MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");
      request.setContentType("application/json");
      request.setContent("{\"item\":\"book\"}".getBytes());
      request.addHeader("Idempotency-Key", "order-rsecrets-1");
      request.addHeader("X-Api-Key", API_KEY);
      MockHttpServletResponse response = new MockHttpServletResponse();
      filter.doFilter(request, response, new MockFilterChain(new Orders()));
      assertEquals(201, response.getStatus());

      IdempotencyGuard guard = context.getBean(IdempotencyGuard.class);
      List<String> stored = guard.records(RecordQuery.all()).records().stream()
          .map(r -> r.id().toString()).toList();
      assertFalse(stored.stream().anyMatch(s -> s.contains(API_KEY)),
          "idem.server.caller-header=X-Api-Key (a header the secret rule names) was accepted, and the API key is"
              + " stored in clear as the record's caller: " + stored);
    });
  }
}
