package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemHealthAutoConfiguration;
import dev.idem.spring.internal.IdemHealth;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * docs/spring.md: "declaring a bean of the same type (IdempotentExecutor, Journal, ...) replaces
 * Idem's", and docs/spring.md's fleet table sends an app that needs another lease length to "an
 * IdempotentExecutor bean of the app's own". Such an executor brings its own journal (a
 * {@code JdbcJournal.dataSource(...)} as docs/fleet.md builds it, or any other). The starter then
 * still opens its embedded journal, which no executor writes to, and binds the health indicator and
 * the {@code idem.operations.pending} gauge to that one: the executor's pending work is invisible to
 * both (health reports 0 pending, the gauge 0), and /actuator/health/idem says nothing of the
 * journal the app actually depends on.
 *
 * <p>Expected: the health indicator and the gauges read the journal of the executor in use.
 */
class OwnExecutorJournalReviewTest {
  @Test
  void healthAndGaugesReadTheJournalOfTheAppsOwnExecutor(@TempDir Path dir) {
    InMemoryJournal appsJournal = new InMemoryJournal();
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class,
            IdemHealthAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false")
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withBean(IdempotentExecutor.class, () -> IdempotentExecutor.builder().journal(appsJournal).build())
        .run(context -> {
          assertNull(context.getStartupFailure());
          IdempotentExecutor executor = context.getBean(IdempotentExecutor.class);
          executor.enqueue(Operation.builder("create-order",
              RequestSnapshot.builder("POST", URI.create("https://api.example/orders"))
                  .body("{\"item\":\"book\"}".getBytes(StandardCharsets.UTF_8), "application/json").build()).build());
          assertEquals(1, appsJournal.count(OperationState.PENDING), "the app's executor journaled one operation");

          context.getBean("idemMetrics");
          Gauge pending = context.getBean(MeterRegistry.class).find("idem.operations.pending").gauge();
          assertNotNull(pending, "no idem.operations.pending gauge");
          @SuppressWarnings("unchecked")
          Map<String, Object> journalDetails =
              (Map<String, Object>) context.getBean(IdemHealth.class).check().details().get("journal");
          assertEquals(1.0, pending.value(),
              "idem.operations.pending reads a journal the app's executor does not use (the starter's own embedded"
                  + " one, opened beside it)");
          assertEquals(1L, ((Number) journalDetails.get("pending")).longValue(),
              "/actuator/health/idem reads a journal the app's executor does not use: " + journalDetails);
        });
  }
}
