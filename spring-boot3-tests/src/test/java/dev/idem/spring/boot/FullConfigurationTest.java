package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.http.UntaggedPolicy;
import dev.idem.spring.autoconfigure.IdemProperties;
import dev.idem.spring.client.IdempotencyInterceptor;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter refuses an idem.* key it does not bind (a misspelling), so every key docs/spring.md
 * and the example app document must bind: an app that sets each of them, none at its default where
 * the value can differ, starts, and the values it set are the ones in force.
 */
class FullConfigurationTest {
  @Test
  void everyDocumentedIdemKeyIsAcceptedAndBound(@TempDir Path dir) {
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(TestApp.class).properties(
        "server.port=0",
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.owner=full-config-1",
        "idem.directory=" + dir.resolve("idem"),
        "idem.shutdown-timeout=3s",
        "idem.journal.store=embedded",
        "idem.journal.max-request-body-bytes=716800",
        "idem.client.enabled=true",
        "idem.client.untagged-policy=reject",
        "idem.client.key-header=Idempotency-Key",
        "idem.client.key-format=structured-string",
        "idem.client.max-body-bytes=2097152",
        "idem.client.max-attempts=4",
        "idem.client.attempt-timeout=5s",
        "idem.client.deadline=30s",
        "idem.client.server-key-retention=12h",
        "idem.client.secret-headers=X-Api-Signature",
        "idem.client.allow-headers=X-Session-Id",
        "idem.client.allow-query-parameters=api_key",
        "idem.outbox.enabled=true",
        "idem.outbox.operations=untagged-post,untagged-patch,create-order",
        "idem.outbox.workers=3",
        "idem.server.enabled=true",
        "idem.server.routes=POST /payments",
        "idem.server.transactional=false",
        "idem.server.store=datasource",
        "idem.server.key-header=Idempotency-Key",
        "idem.server.retention=12h",
        "idem.server.mismatch-status=409",
        "idem.server.in-flight-wait=1s",
        "idem.server.max-buffered-body-bytes=1048576",
        "idem.server.caller-header=X-Tenant-Id",
        "idem.webhooks.store=embedded",
        "idem.webhooks.workers=2",
        "idem.webhooks.sources.payments.scheme=stripe",
        "idem.webhooks.sources.payments.secrets[0]=whsec_idemFullConfigTest",
        "idem.webhooks.sources.payments.path=/hooks/payments",
        "idem.webhooks.sources.payments.tolerance=3m",
        "management.health.idem.enabled=true").run()) {
      IdemProperties p = app.getBean(IdemProperties.class);
      assertEquals("full-config-1", p.owner());
      assertEquals(716800, p.journal().maxRequestBodyBytes());
      assertEquals(UntaggedPolicy.REJECT, app.getBean(IdempotencyInterceptor.class).untaggedPolicy());
      assertEquals(Duration.ofSeconds(5), p.client().attemptTimeout());
      assertEquals(List.of("untagged-post", "untagged-patch", "create-order"), p.outbox().operations());
      assertEquals(409, p.server().mismatchStatus());
      assertEquals("X-Tenant-Id", p.server().callerHeader());
      assertEquals(Duration.ofMinutes(3), p.webhooks().sources().get("payments").tolerance());
      assertTrue(p.webhooks().sources().get("payments").path().equals("/hooks/payments"));
    }
  }
}
