package dev.idem.spring.autoconfigure;

import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.IdempotentExecutor;
import dev.idem.server.IdempotencyGuard;
import dev.idem.spring.internal.BreakerStates;
import dev.idem.spring.internal.HealthEnabledCondition;
import dev.idem.spring.internal.IdemHealth;
import dev.idem.webhooks.WebhookInbox;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.function.SingletonSupplier;

/**
 * Idem's health indicator ({@code /actuator/health/idem}): the journal takes writes, circuit
 * breakers not closed, the outbox's lag (pending operations and the oldest one's age), UNCERTAIN
 * operations, stuck guard claims and webhook dead letters. Boot 3 and Boot 4 keep their health
 * API in different packages; one indicator per version, each made only when its API is there (the
 * nested configurations name those types, so nothing else loads them).
 *
 * <p>Off with {@code management.health.idem.enabled=false} (or
 * {@code management.health.defaults.enabled=false}), as Boot's own indicators are.
 */
@AutoConfiguration(after = {IdemAutoConfiguration.class, IdemClientAutoConfiguration.class,
    IdemServerAutoConfiguration.class, IdemWebhooksAutoConfiguration.class})
@Conditional(HealthEnabledCondition.class)
public class IdemHealthAutoConfiguration {
  /** Makes the auto-configuration; Spring calls it. */
  public IdemHealthAutoConfiguration() {}

  /**
   * The checks, for either version's indicator.
   *
   * @param executor the executor in use (the app's own, if it declared one), whose journal is checked
   * @param breakers the breaker states
   * @param outbox the outboxes, if any: every OutboxDispatcher bean (an app may declare several)
   * @param guard the guard, if any
   * @param inbox the inbox, if any
   * @return the checks
   */
  @Bean
  public IdemHealth idemHealth(ObjectProvider<IdempotentExecutor> executor, BreakerStates breakers,
      ObjectProvider<OutboxDispatcher> outbox, ObjectProvider<IdempotencyGuard> guard,
      ObjectProvider<WebhookInbox> inbox) {
    return new IdemHealth(SingletonSupplier.of(() -> executor.getObject().journal()), breakers,
        () -> outbox.orderedStream().toList(),
        guard::getIfAvailable, inbox::getIfAvailable, Clock.systemUTC());
  }

  /** Boot 3.5: spring-boot-actuator's {@code HealthIndicator}. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
  static class Boot3 {
    @Bean(name = "idemHealthIndicator")
    org.springframework.boot.actuate.health.HealthIndicator idemHealthIndicator(IdemHealth health) {
      return () -> {
        IdemHealth.Report r = health.check();
        return (r.up() ? org.springframework.boot.actuate.health.Health.up()
            : org.springframework.boot.actuate.health.Health.down()).withDetails(r.details()).build();
      };
    }
  }

  /** Boot 4.0: spring-boot-health's {@code HealthIndicator}. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
  static class Boot4 {
    @Bean(name = "idemHealthIndicator")
    org.springframework.boot.health.contributor.HealthIndicator idemHealthIndicator(IdemHealth health) {
      return () -> {
        IdemHealth.Report r = health.check();
        return (r.up() ? org.springframework.boot.health.contributor.Health.up()
            : org.springframework.boot.health.contributor.Health.down()).withDetails(r.details()).build();
      };
    }
  }
}
