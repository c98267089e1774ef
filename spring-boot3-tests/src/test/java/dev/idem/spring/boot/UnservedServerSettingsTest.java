package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemServerAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemWebhooksAutoConfiguration;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;

/**
 * The guard and the webhook endpoints are servlet filters that only a Spring MVC app runs. An
 * {@code idem.server.*} setting in a reactive WebFlux app, which runs no guard, says the app believes
 * a guard runs: it must fail the startup naming the property, as {@code idem.server.routes} there
 * does, rather than start and let a retried keyed request run its handler again. An app that serves
 * no web requests at all is not refused (see below). {@code idem.server.enabled=false} is the app saying
 * it knows nothing guards it, and an app that sets no {@code idem.server.*} key starts as before.
 */
class UnservedServerSettingsTest {
  private static final AutoConfigurations IDEM = AutoConfigurations.of(IdemAutoConfiguration.class,
      IdemClientAutoConfiguration.class, IdemServerAutoConfiguration.class, IdemWebhooksAutoConfiguration.class);

  private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
      .withConfiguration(IDEM).withPropertyValues("idem.outbox.enabled=false");
  private final ApplicationContextRunner notWeb = new ApplicationContextRunner()
      .withConfiguration(IDEM).withPropertyValues("idem.outbox.enabled=false");

  /** Every idem.server key but routes (refused before) and enabled=false (the way out). */
  @ParameterizedTest
  @ValueSource(strings = {"idem.server.key-header=X-Request-Key", "idem.server.store=datasource",
      "idem.server.retention=1h", "idem.server.transactional=true", "idem.server.in-flight-wait=2s",
      "idem.server.mismatch-status=409", "idem.server.max-buffered-body-bytes=1024",
      "idem.server.caller-header=X-Tenant-Id", "idem.server.enabled=true",
      // relaxed spellings of the same keys bind, so they are refused the same way
      "idem.server.keyHeader=X-Request-Key", "idem.server.in_flight_wait=2s"})
  void aServerSettingInAReactiveAppFailsTheStartup(String setting, @TempDir Path dir) {
    reactive.withPropertyValues("idem.directory=" + dir, setting).run(context -> {
      Throwable failure = context.getStartupFailure();
      assertNotNull(failure, "a reactive app with " + setting + " started, and no guard reads it");
      String m = messages(failure);
      assertTrue(m.contains(canonical(setting)) && m.contains("reactive"), m);
    });
  }

  /**
   * Not refused where no web server runs: a {@code @SpringBootTest(webEnvironment = NONE)} of a
   * Spring MVC app and the parent of a context hierarchy with a web child look the same at startup
   * as a batch job that shares the web app's configuration (the review tests in
   * review/unserved pin those two), so such an app starts, and nothing there reads the settings.
   */
  @ParameterizedTest
  @ValueSource(strings = {"idem.server.routes=POST /orders", "idem.server.routes[0]=POST /orders",
      "idem.server.key-header=X-Request-Key", "idem.server.store=datasource", "idem.server.caller-header=X-Tenant-Id",
      "idem.webhooks.sources.payments.scheme=stripe"})
  void anAppWithoutAWebServerStartsWithTheWebAppsSettingsAndRunsNoGuard(String setting, @TempDir Path dir) {
    notWeb.withPropertyValues("idem.directory=" + dir, setting, "idem.webhooks.sources.payments.secrets[0]=whsec-test")
        .run(context -> {
          assertNull(context.getStartupFailure());
          assertFalse(context.containsBean("idemGuardFilter"));
        });
  }

  @Test
  void theServerTurnedOffStartsWithItsSettings(@TempDir Path dir) {
    reactive.withPropertyValues("idem.directory=" + dir, "idem.server.enabled=false",
        "idem.server.key-header=X-Request-Key", "idem.server.routes=POST /orders")
        .run(context -> assertNull(context.getStartupFailure()));
    notWeb.withPropertyValues("idem.directory=" + dir, "idem.server.enabled=false",
        "idem.server.key-header=X-Request-Key", "idem.server.routes=POST /orders")
        .run(context -> assertNull(context.getStartupFailure()));
  }

  @Test
  void anAppWithoutServerSettingsStartsAsBefore(@TempDir Path dir) {
    reactive.withPropertyValues("idem.directory=" + dir, "idem.client.untagged-policy=reject").run(context -> {
      assertNull(context.getStartupFailure());
      assertFalse(context.containsBean("idemGuardFilter"));
    });
    notWeb.withPropertyValues("idem.directory=" + dir, "idem.client.untagged-policy=reject").run(context -> {
      assertNull(context.getStartupFailure());
      assertFalse(context.containsBean("idemGuardFilter"));
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
