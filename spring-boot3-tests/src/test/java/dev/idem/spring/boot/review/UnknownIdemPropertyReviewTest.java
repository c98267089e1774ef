package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.client.IdempotencyInterceptor;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * A misspelt {@code idem.*} key is ignored without a word. {@code idem.client.untaged-policy=reject}
 * (one "g") starts the app with the default {@code fresh-key}: a team that asked for every POST to be
 * named gets silently keyed untagged POSTs instead; {@code idem.directroy=/data/idem} leaves the
 * journal in {@code ./idem} of the working directory (an ephemeral container layer), losing the keys
 * of pending operations at the next redeploy. The starter validates every value it binds (a bad
 * duration, a negative count, a blank directory fail the startup), but binds with Spring's default
 * {@code ignoreUnknownFields = true}.
 *
 * <p>Expected: an unknown key under {@code idem.} fails the startup naming it (for instance
 * {@code @ConfigurationProperties(prefix = "idem", ignoreUnknownFields = false)}). Actual: the app
 * starts, with the interceptor's untagged policy FRESH_KEY.
 */
class UnknownIdemPropertyReviewTest {
  @Test
  void aMisspeltIdemKeyFailsTheStartupRatherThanFallingBackToTheDefault(@TempDir Path dir) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.client.untaged-policy=reject")
        .run(context -> {
          Throwable failure = context.getStartupFailure();
          assertNotNull(failure, "idem.client.untaged-policy=reject (misspelt) started the app with untagged policy "
              + (failure == null ? context.getBean(IdempotencyInterceptor.class).untaggedPolicy() : null));
          StringBuilder messages = new StringBuilder();
          for (Throwable c = failure; c != null; c = c.getCause()) {
            messages.append(c.getMessage()).append('\n');
          }
          assertTrue(messages.toString().contains("untaged"), messages.toString());
        });
  }
}
