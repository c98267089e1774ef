package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.RetryPolicy;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.jdbc.JdbcJournal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * IdemProperties binds through its records' constructors: with no idem.* property at all every
 * setting has the default docs/spring.md lists (nested groups and collections included, never
 * null), and the property names bind as before the records (relaxed names, lists, the sources map).
 */
class IdemPropertiesTest {
  private static IdemProperties bind(Map<String, String> values) {
    return new Binder(new MapConfigurationPropertySource(values)).bindOrCreate("idem", IdemProperties.class);
  }

  @Test
  void withNothingSetEverySettingHasItsDefault() {
    IdemProperties p = bind(Map.of());
    assertNull(p.owner());
    assertEquals("idem", p.directory());
    assertEquals(Duration.ofSeconds(15), p.shutdownTimeout());
    assertEquals(IdemProperties.Store.EMBEDDED, p.journal().store());
    assertEquals(JdbcJournal.DEFAULT_MAX_REQUEST_BODY, p.journal().maxRequestBodyBytes());

    IdemProperties.Client c = p.client();
    assertTrue(c.enabled());
    assertEquals(UntaggedPolicy.FRESH_KEY, c.untaggedPolicy());
    assertEquals("Idempotency-Key", c.keyHeader());
    assertEquals(KeyHeaderFormat.BARE, c.keyFormat());
    assertEquals(1048576, c.maxBodyBytes());
    assertEquals(3, c.maxAttempts());
    assertNull(c.attemptTimeout());
    assertEquals(Duration.ofSeconds(60), c.deadline());
    assertEquals(Duration.ofHours(24), c.serverKeyRetention());
    assertEquals(Set.of(), c.secretHeaders());
    assertEquals(Set.of(), c.allowHeaders());
    assertEquals(Set.of(), c.allowQueryParameters());

    assertTrue(p.outbox().enabled());
    assertEquals(List.of("untagged-post", "untagged-patch"), p.outbox().operations());
    assertEquals(2, p.outbox().workers());

    IdemProperties.Server s = p.server();
    assertTrue(s.enabled());
    assertEquals(List.of(), s.routes());
    assertFalse(s.transactional());
    assertEquals(IdemProperties.Store.EMBEDDED, s.store());
    assertEquals("Idempotency-Key", s.keyHeader());
    assertEquals(Duration.ofHours(24), s.retention());
    assertEquals(422, s.mismatchStatus());
    assertEquals(Duration.ZERO, s.inFlightWait());
    assertEquals(8388608, s.maxBufferedBodyBytes());
    assertNull(s.callerHeader(), "the principal's name by default");

    assertEquals(IdemProperties.Store.EMBEDDED, p.webhooks().store());
    assertEquals(4, p.webhooks().workers());
    assertEquals(Map.of(), p.webhooks().sources());
  }

  @Test
  void theSecretRulesOptOutsBind() {
    IdemProperties p = bind(Map.of("idem.client.allow-headers", "X-Session-Id",
        "idem.client.allow-query-parameters", "api_key,access_token"));
    assertEquals(Set.of("X-Session-Id"), p.client().allowHeaders());
    assertEquals(Set.of("api_key", "access_token"), p.client().allowQueryParameters());
  }

  @Test
  void thePropertyNamesBind() {
    IdemProperties p = bind(Map.of(
        "idem.client.untagged-policy", "reject",
        "idem.client.secret-headers", "X-Api-Key,X-Tenant-Secret",
        "idem.client.attempt-timeout", "3s",
        "idem.server.routes[0]", "POST /orders",
        "idem.server.in-flight-wait", "250ms",
        "idem.server.max-buffered-body-bytes", "2097152",
        "idem.server.store", "datasource",
        "idem.webhooks.sources.stripe.scheme", "stripe",
        "idem.webhooks.sources.stripe.secrets[0]", "whsec_new",
        "idem.webhooks.sources.stripe.secrets[1]", "whsec_old"));
    assertEquals(UntaggedPolicy.REJECT, p.client().untaggedPolicy());
    assertEquals(Set.of("X-Api-Key", "X-Tenant-Secret"), p.client().secretHeaders());
    assertEquals(Duration.ofSeconds(3), p.client().attemptTimeout());
    assertEquals(List.of("POST /orders"), p.server().routes());
    assertEquals(Duration.ofMillis(250), p.server().inFlightWait());
    assertEquals(2097152, p.server().maxBufferedBodyBytes());
    assertEquals(IdemProperties.Store.DATASOURCE, p.server().store());
    assertEquals(3, p.client().maxAttempts(), "an unset sibling keeps its default");

    IdemProperties.Source stripe = p.webhooks().sources().get("stripe");
    assertEquals(IdemProperties.Scheme.STRIPE, stripe.scheme());
    assertEquals(List.of("whsec_new", "whsec_old"), stripe.secrets());
    assertEquals(Duration.ofMinutes(5), stripe.tolerance());
    assertFalse(stripe.toString().contains("whsec"), "a source never shows its secrets");
  }

  @Test
  void theDefaultShutdownTimeoutAndTheExecutorsCloseFitInBootsDefaultShutdownPhase() {
    // A graceful shutdown drains the outbox for idem.shutdown-timeout, then the executor's close
    // waits up to 10 s; Boot gives a lifecycle phase 30 s (timeout-per-shutdown-phase) and then
    // goes on to close the beans, the journal among them. docs/spring.md: keep the sum below.
    Duration drainAndClose = bind(Map.of()).shutdownTimeout().plusSeconds(10);
    assertTrue(drainAndClose.compareTo(Duration.ofSeconds(30)) < 0,
        "the default shutdown-timeout plus the executor's 10 s close is " + drainAndClose + ", not below Boot's 30 s");
  }

  @Test
  void aZeroShutdownTimeoutMeansNoWait() {
    assertEquals(Duration.ZERO, bind(Map.of("idem.shutdown-timeout", "0s")).shutdownTimeout());
  }

  @Test
  void aNegativeShutdownTimeoutOrABlankDirectoryIsRefusedNamingTheProperty() {
    assertRefused(Map.of("idem.shutdown-timeout", "-5s"), "idem.shutdown-timeout is PT-5S");
    assertRefused(Map.of("idem.directory", ""), "idem.directory is blank");
    assertRefused(Map.of("idem.directory", "  "), "idem.directory is blank");
  }

  @Test
  void theClientsLimitsAreTheBuildersExactly() {
    // The records check what the builders would refuse, to name the property; a limit of their own
    // (narrower or wider) would refuse a value the builder takes, or start an app the builder fails.
    Duration longest = IdemProperties.MAX_DURATION;
    IdemProperties p = bind(Map.of("idem.client.deadline", longest.toDays() + "d",
        "idem.client.attempt-timeout", longest.toDays() + "d", "idem.client.server-key-retention", longest.toDays() + "d",
        "idem.client.max-attempts", "1", "idem.client.max-body-bytes", "0", "idem.outbox.workers", "1",
        "idem.client.key-header", "X~Key!"));
    RetryPolicy.builder().deadline(p.client().deadline()).attemptTimeout(p.client().attemptTimeout())
        .maxAttempts(p.client().maxAttempts()).build();
    IdempotentExecutor.builder().journal(new InMemoryJournal()).serverKeyRetention(p.client().serverKeyRetention())
        .build().close();
    AdapterSupport.checkHeaderName(p.client().keyHeader());

    Duration tooLong = longest.plusSeconds(1);
    assertThrows(IllegalArgumentException.class, () -> RetryPolicy.builder().deadline(tooLong));
    assertRefused(Map.of("idem.client.deadline", tooLong.toSeconds() + "s"), "idem.client.deadline must be positive");
    assertThrows(IllegalArgumentException.class, () -> AdapterSupport.checkHeaderName("Idempotency-Key:"));
    assertRefused(Map.of("idem.client.key-header", "Idempotency-Key:"), "idem.client.key-header must be a header name");
  }

  @Test
  void aBadClientOrOutboxValueIsRefusedNamingTheProperty() {
    assertRefused(Map.of("idem.client.max-attempts", "0"), "idem.client.max-attempts must be at least 1, was 0");
    assertRefused(Map.of("idem.client.deadline", "0s"), "idem.client.deadline must be positive");
    assertRefused(Map.of("idem.client.attempt-timeout", "-1s"), "idem.client.attempt-timeout must be positive");
    assertRefused(Map.of("idem.client.server-key-retention", "0s"),
        "idem.client.server-key-retention must be positive");
    assertRefused(Map.of("idem.client.max-body-bytes", "-1"), "idem.client.max-body-bytes must be at least 0, was -1");
    assertRefused(Map.of("idem.client.key-header", "Idempotency Key"), "idem.client.key-header must be a header name");
    assertRefused(Map.of("idem.outbox.workers", "0"), "idem.outbox.workers must be at least 1, was 0");
  }

  @Test
  void aBadWebhooksWorkersOrMaxRunTimeIsRefusedNamingTheProperty() {
    assertRefused(Map.of("idem.webhooks.workers", "0"), "idem.webhooks.workers must be at least 1, was 0");
    assertRefused(Map.of("idem.webhooks.max-run-time", "0s"), "idem.webhooks.max-run-time must be positive, was PT0S");
    assertRefused(Map.of("idem.webhooks.max-run-time", "-1m"), "idem.webhooks.max-run-time must be positive");
    // The processor's own limits, no narrower: it takes one worker and any positive run time.
    IdemProperties p = bind(Map.of("idem.webhooks.workers", "1", "idem.webhooks.max-run-time", "1ms"));
    assertEquals(1, p.webhooks().workers());
    assertEquals(Duration.ofMillis(1), p.webhooks().maxRunTime());
  }

  private static void assertRefused(Map<String, String> values, String message) {
    BindException e = assertThrows(BindException.class, () -> bind(values));
    Throwable cause = e; // Boot's failure analysis prints the root cause as the reason
    while (cause.getCause() != null) {
      cause = cause.getCause();
    }
    assertInstanceOf(IllegalArgumentException.class, cause, String.valueOf(cause));
    assertTrue(cause.getMessage().startsWith(message), cause.getMessage());
  }
}
