package dev.idem.spring.internal;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches when {@code idem.webhooks.sources} names at least one source. */
public final class WebhookSourcesCondition implements Condition {
  @Override
  public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
    return Binder.get(context.getEnvironment())
        .bind("idem.webhooks.sources", Bindable.mapOf(String.class, Object.class))
        .map(m -> !m.isEmpty()).orElse(false);
  }
}
