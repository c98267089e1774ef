package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemWebhooksAutoConfiguration;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/**
 * docs/spring.md's idem.owner row says "at most 200 characters, no control characters", and only
 * the guard as narrower. With a webhook source configured the processor also takes idem.owner and
 * holds it to the inbox's 128 characters: a 150-character name the row allows fails the startup,
 * and the starter's wrapper (546fbb5a, IdemWebhooksAutoConfiguration reuses badOwner(e) with its
 * default "in the journal") says the name identifies this instance "in the journal", which took
 * it. Expected: the message says where it was refused (the webhook inbox), as the guard's does.
 */
class WebhookOwnerMessageReviewTest {
  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemWebhooksAutoConfiguration.class));

  @Test
  void anOwnerTheWebhookInboxRefusesIsNotBlamedOnTheJournal(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir, "idem.owner=" + "p".repeat(150),
        "idem.webhooks.sources.stripe.scheme=stripe", "idem.webhooks.sources.stripe.secrets[0]=whsec_idemStripeTest")
        .run(context -> {
          Throwable failure = context.getStartupFailure();
          assertNotNull(failure, "a 150-character owner started webhooks (the inbox holds 128)");
          String messages = messages(failure);
          assertFalse(messages.contains("names this instance in the journal"),
              "the webhook processor's refusal is reported as the journal's:\n" + messages);
        });
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append('\n');
    }
    return sb.toString();
  }
}
