package dev.idem.spring.internal.boot4;

import dev.idem.spring.internal.IdemHealth;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/** {@link IdemHealth} on Boot 4's health API ({@code org.springframework.boot.health.contributor}). */
public final class IdemHealthIndicator implements HealthIndicator {
  private final IdemHealth health;

  /** @param health the checks */
  public IdemHealthIndicator(IdemHealth health) {
    this.health = health;
  }

  @Override
  public Health health() {
    IdemHealth.Report r = health.check();
    return (r.up() ? Health.up() : Health.down()).withDetails(r.details()).build();
  }
}
