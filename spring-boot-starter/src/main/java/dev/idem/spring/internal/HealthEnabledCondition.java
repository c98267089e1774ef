package dev.idem.spring.internal;

import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches unless the app turned Idem's health indicator off, as Spring Boot's own indicators are:
 * {@code management.health.idem.enabled}, else {@code management.health.defaults.enabled}, else on.
 * Boot's {@code @ConditionalOnEnabledHealthIndicator} does the same, but lives in a different
 * package in Boot 3 and Boot 4, and the starter serves both.
 */
public final class HealthEnabledCondition implements Condition {
  @Override
  public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
    Environment env = context.getEnvironment();
    Boolean own = env.getProperty("management.health.idem.enabled", Boolean.class);
    if (own != null) {
      return own;
    }
    return env.getProperty("management.health.defaults.enabled", Boolean.class, true);
  }
}
