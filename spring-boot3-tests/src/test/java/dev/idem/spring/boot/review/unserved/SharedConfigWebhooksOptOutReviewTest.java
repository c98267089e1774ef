package dev.idem.spring.boot.review.unserved;

import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemServerAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemWebhooksAutoConfiguration;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * docs/spring.md (commit 79a46330): "An app that shares its configuration with a Spring MVC app sets
 * idem.server.enabled=false where no guard runs." A Spring MVC app that receives Stripe deliveries
 * ({@code idem.webhooks.sources.*}) shares its application.yml with a nightly batch job of the same
 * codebase ({@code spring.main.web-application-type=none}); the job sets the documented opt-out.
 * Before 79a46330 the job started; now it fails on {@code idem.webhooks.sources}, which
 * {@code idem.server.enabled=false} does not cover and for which no opt-out exists at all: the
 * message says only "Remove the setting, or run the app on Spring MVC". The job's only way to run is
 * to move the web app's webhook configuration into a profile.
 *
 * <p>Expected: the batch job with {@code idem.server.enabled=false} starts (or some documented
 * switch lets it). Actual: IllegalStateException "idem.webhooks.sources [stripe] is set, but this is
 * an app that serves no web requests ...".
 */
class SharedConfigWebhooksOptOutReviewTest {
  private final ApplicationContextRunner batchJob = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class,
          IdemServerAutoConfiguration.class, IdemWebhooksAutoConfiguration.class))
      .withPropertyValues(
          // the shared application.yml, as the Spring MVC app needs it
          "idem.server.routes=POST /orders", "idem.webhooks.sources.stripe.scheme=stripe",
          "idem.webhooks.sources.stripe.secrets[0]=whsec-test", "idem.outbox.enabled=false",
          // the batch job's own setting, the opt-out docs/spring.md gives for a shared configuration
          "idem.server.enabled=false");

  @Test
  void aBatchJobSharingTheWebAppsConfigurationStartsWithTheDocumentedOptOut(@TempDir Path dir) {
    batchJob.withPropertyValues("idem.directory=" + dir)
        .run(context -> assertNull(context.getStartupFailure(), () -> "the batch job did not start: "
            + root(context.getStartupFailure()).getMessage()));
  }

  private static Throwable root(Throwable t) {
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
