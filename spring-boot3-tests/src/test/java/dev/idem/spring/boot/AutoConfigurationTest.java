package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemHealthAutoConfiguration;
import dev.idem.spring.client.IdempotencyInterceptor;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The core and client auto-configuration without a web server: defaults, switches, and a journal that will not open. */
class AutoConfigurationTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class));

  @Test
  void theDefaultsKeyUntaggedPostsAndOpenTheEmbeddedJournal(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir).run(context -> {
      assertNotNull(context.getBean(IdempotentExecutor.class));
      assertTrue(context.getBean(JdbcJournal.class).toString().contains("sqlite"));
      assertTrue(context.getBean(IdempotencyInterceptor.class).untaggedPolicy() == UntaggedPolicy.FRESH_KEY);
    });
  }

  /** The journal's storage meter is bound beside the client's meters when the app has a registry. */
  @Test
  void aRegistryGetsTheJournalsStorageSizeGauge(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir)
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(context -> {
          context.getBean("idemMetrics");
          Gauge size = context.getBean(MeterRegistry.class).find("idem.storage.size").tag("store", "journal").gauge();
          assertNotNull(size, "no idem.storage.size{store=journal}");
          assertTrue(size.value() > 0, "the journal's size: " + size.value());
        });
  }

  @Test
  void theClientSideCanBeTurnedOff(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir, "idem.client.enabled=false")
        .run(context -> assertFalse(context.containsBean("idemInterceptor")));
  }

  /** As Boot's own indicators: {@code management.health.<name>.enabled}, then the defaults switch. */
  @Test
  void theHealthIndicatorFollowsManagementHealthSwitches(@TempDir Path dir) {
    ApplicationContextRunner withHealth = runner.withConfiguration(
        AutoConfigurations.of(IdemHealthAutoConfiguration.class)).withPropertyValues("idem.directory=" + dir);
    withHealth.run(context -> assertTrue(context.containsBean("idemHealthIndicator")));
    withHealth.withPropertyValues("management.health.idem.enabled=false")
        .run(context -> assertFalse(context.containsBean("idemHealthIndicator")));
    withHealth.withPropertyValues("management.health.defaults.enabled=false")
        .run(context -> assertFalse(context.containsBean("idemHealthIndicator")));
    withHealth.withPropertyValues("management.health.defaults.enabled=false", "management.health.idem.enabled=true")
        .run(context -> assertTrue(context.containsBean("idemHealthIndicator")));
  }

  /**
   * A URI whose query names a credential is refused unless the app allows the parameter: before
   * these properties a Spring app could only allow it by building the executor itself.
   */
  @Test
  void allowQueryParametersLetsTheExecutorJournalSuchAUri(@TempDir Path dir) {
    Operation op = Operation.builder("create-order",
        RequestSnapshot.builder("POST", URI.create("https://api.example/orders?api_key=public-demo")).build()).build();
    Transport created = (request, key) -> new ResponseSnapshot(201, Map.of(), new byte[0]);
    runner.withPropertyValues("idem.directory=" + dir.resolve("refused")).run(context -> {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> context.getBean(IdempotentExecutor.class).execute(op, created));
      assertTrue(e.getMessage().contains("api_key") && !e.getMessage().contains("public-demo"), e.getMessage());
    });
    runner.withPropertyValues("idem.directory=" + dir.resolve("allowed"), "idem.client.allow-query-parameters=api_key")
        .run(context -> {
          assertEquals(201, context.getBean(IdempotentExecutor.class).execute(op, created).response().status());
          assertEquals(op.request().uri(), context.getBean(JdbcJournal.class).find(op.id()).orElseThrow()
              .request().uri());
        });
  }

  /** JdbcJournal.openEmbedded throws a checked exception: the startup fails with its message, no `throws` needed. */
  @Test
  void aJournalThatCannotOpenFailsTheStartupWithItsMessage(@TempDir Path dir) throws Exception {
    try (JdbcJournal taken = JdbcJournal.embedded(dir.resolve("journal")).closeOnShutdown(false).open()) {
      runner.withPropertyValues("idem.directory=" + dir).run(context -> {
        Throwable failure = context.getStartupFailure();
        assertNotNull(failure, "the context started on a journal another owner holds");
        String all = messages(failure);
        assertTrue(all.contains("Idem could not open its journal") && all.contains(dir.resolve("journal").toString()),
            all);
      });
    }
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append('\n');
    }
    return sb.toString();
  }
}
