package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemServerAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemWebhooksAutoConfiguration;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableReactiveWebApplicationContext;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;

/**
 * A WebFlux app (the starter's client side supports its {@code WebClient.Builder}, so WebFlux apps
 * are the starter's users too) that configures a webhook source, as the README's quickstart does,
 * or guarded routes: the webhook endpoints and the guard are servlet filters, and their
 * auto-configurations are {@code @ConditionalOnWebApplication(SERVLET)}, so in a reactive app the
 * settings bind and nothing serves them. The app starts without a word: the provider's deliveries
 * to {@code /webhooks/payments} get 404 (Stripe then disables the endpoint) and no
 * {@code WebhookSubscription} bean ever runs; {@code POST /orders} runs its handler once per retry.
 * The starter fails the startup for a misspelt {@code idem.} key for exactly this reason ("ignored,
 * it would leave the default in force without a word").
 *
 * <p>Expected: the startup fails (or at least refuses the settings), naming the property and that
 * it needs a servlet (Spring MVC) app. Actual: the app starts, with no inbox and no guard.
 */
class ReactiveAppServerSettingsReviewTest {
  private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class,
          IdemServerAutoConfiguration.class, IdemWebhooksAutoConfiguration.class));

  @Test
  void aWebhookSourceInAReactiveAppFailsTheStartupRatherThanServingNothing(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir, "idem.webhooks.sources.payments.scheme=stripe",
        "idem.webhooks.sources.payments.secrets[0]=whsec-test").run(context -> {
          assertNotNull(context.getStartupFailure(), "a reactive app with idem.webhooks.sources.payments started; "
              + served(context, "idemWebhookInbox"));
          assertTrue(messages(context.getStartupFailure()).contains("idem.webhooks.sources"),
              messages(context.getStartupFailure()));
        });
  }

  @Test
  void guardedRoutesInAReactiveAppFailTheStartupRatherThanGuardingNothing(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir, "idem.server.routes=POST /orders").run(context -> {
      assertNotNull(context.getStartupFailure(), "a reactive app with idem.server.routes=POST /orders started; "
          + served(context, "idemGuardFilter"));
      assertTrue(messages(context.getStartupFailure()).contains("idem.server.routes"),
          messages(context.getStartupFailure()));
    });
  }

  private static String served(AssertableReactiveWebApplicationContext context, String bean) {
    return context.getStartupFailure() != null ? "" : "bean " + bean + " present: " + context.containsBean(bean);
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append('\n');
    }
    return sb.toString();
  }
}
