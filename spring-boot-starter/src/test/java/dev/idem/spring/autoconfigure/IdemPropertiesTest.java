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
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookSource;
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

  @Test
  void theServersLimitsAreTheGuardsBuilders() {
    // The smallest and largest values the guard's builder takes bind, and build a guard; the
    // retention has the 100-year ceiling of every duration setting besides (the guard adds it to an
    // instant on every keyed request).
    IdemProperties p = bind(Map.of("idem.server.retention", "1ns", "idem.server.in-flight-wait", "5m",
        "idem.server.mismatch-status", "400", "idem.server.max-buffered-body-bytes", "1"));
    IdempotencyGuard.builder(new InMemoryIdempotencyStore()).retention(p.server().retention())
        .inFlightWait(p.server().inFlightWait()).mismatchStatus(p.server().mismatchStatus()).build().close();
    p = bind(Map.of("idem.server.retention", IdemProperties.MAX_DURATION.toDays() + "d",
        "idem.server.in-flight-wait", "0s", "idem.server.mismatch-status", "499"));
    IdempotencyGuard.builder(new InMemoryIdempotencyStore()).retention(p.server().retention())
        .inFlightWait(p.server().inFlightWait()).mismatchStatus(p.server().mismatchStatus()).build().close();

    // One past them the builder refuses, and so does the binding, naming the property.
    assertThrows(IllegalArgumentException.class, () -> IdempotencyGuard.builder(new InMemoryIdempotencyStore())
        .retention(Duration.ZERO));
    assertRefused(Map.of("idem.server.retention", "0s"), "idem.server.retention must be positive");
    assertRefused(Map.of("idem.server.retention", "-1ns"), "idem.server.retention must be positive");
    assertRefused(Map.of("idem.server.retention", (IdemProperties.MAX_DURATION.toDays() + 1) + "d"),
        "idem.server.retention must be positive and at most 36525d");
    assertThrows(IllegalArgumentException.class, () -> IdempotencyGuard.builder(new InMemoryIdempotencyStore())
        .inFlightWait(Duration.ofMinutes(5).plusNanos(1)));
    assertRefused(Map.of("idem.server.in-flight-wait", "301s"), "idem.server.in-flight-wait must be 0s to 5m");
    assertThrows(IllegalArgumentException.class, () -> IdempotencyGuard.builder(new InMemoryIdempotencyStore())
        .inFlightWait(Duration.ofNanos(-1)));
    assertRefused(Map.of("idem.server.in-flight-wait", "-1ns"), "idem.server.in-flight-wait must be 0s to 5m");
    assertThrows(IllegalArgumentException.class, () -> IdempotencyGuard.builder(new InMemoryIdempotencyStore())
        .mismatchStatus(500));
    assertRefused(Map.of("idem.server.mismatch-status", "500"), "idem.server.mismatch-status must be a 4xx");
    assertRefused(Map.of("idem.server.mismatch-status", "399"), "idem.server.mismatch-status must be a 4xx");
    assertRefused(Map.of("idem.server.max-buffered-body-bytes", "0"),
        "idem.server.max-buffered-body-bytes must be at least 1, was 0");
  }

  @Test
  void aWebhookSourcesToleranceIsTheSourceBuildersExactly() {
    IdemProperties p = bind(Map.of("idem.webhooks.sources.stripe.tolerance", "0s"));
    WebhookSource.builder("stripe", SignatureScheme.stripe()).tolerance(p.webhooks().sources().get("stripe").tolerance());

    assertThrows(IllegalArgumentException.class,
        () -> WebhookSource.builder("stripe", SignatureScheme.stripe()).tolerance(Duration.ofNanos(-1)));
    assertRefused(Map.of("idem.webhooks.sources.stripe.tolerance", "-1ns"),
        "idem.webhooks.sources.stripe.tolerance must not be negative");
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
