package dev.idem.spring.boot.webhookpaths;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * Two webhook sources configured on the same path. The starter registered one servlet per source
 * and ignored what {@code ServletRegistration.addMapping} returns (the patterns it did not map
 * because another servlet holds them): the second source got no endpoint at all, the app started
 * without a word, and every delivery of the second sender was verified against the first one's
 * scheme and secrets and refused. The app now refuses to start, naming the path and both sources.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix (the Stripe delivery got 400).
 */
class WebhookPathClashTest {
  @SpringBootApplication
  static class App {}

  @Test
  void twoSourcesOnOnePathRefuseToStartNamingThem(@TempDir Path dir) {
    SpringApplicationBuilder app = new SpringApplicationBuilder(App.class).properties(
        "server.port=0",
        "idem.directory=" + dir,
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.enabled=false",
        "idem.webhooks.sources.stripe.scheme=stripe",
        "idem.webhooks.sources.stripe.secrets[0]=whsec_stripe",
        "idem.webhooks.sources.stripe.path=/hooks",
        "idem.webhooks.sources.github.scheme=github",
        "idem.webhooks.sources.github.secrets[0]=gh-secret",
        "idem.webhooks.sources.github.path=/hooks");

    RuntimeException refused = assertThrows(RuntimeException.class, () -> app.run().close());

    String all = messages(refused);
    assertTrue(all.contains("/hooks") && all.contains("idem.webhooks.sources.stripe")
        && all.contains("idem.webhooks.sources.github"), all);
  }

  /**
   * A pattern path ({@code /hooks/*}) is not served by the filter that reads deliveries ahead of
   * the app's filters, only by the servlet behind them; with a body-reading filter every
   * form-encoded delivery would be refused as badly signed. The app now refuses to start, naming
   * the setting.
   */
  @Test
  void aPatternPathRefusesToStartNamingTheSetting(@TempDir Path dir) {
    SpringApplicationBuilder app = new SpringApplicationBuilder(App.class).properties(
        "server.port=0",
        "idem.directory=" + dir,
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.enabled=false",
        "idem.webhooks.sources.github.scheme=github",
        "idem.webhooks.sources.github.secrets[0]=gh-secret",
        "idem.webhooks.sources.github.path=/hooks/*");

    RuntimeException refused = assertThrows(RuntimeException.class, () -> app.run().close());

    String all = messages(refused);
    assertTrue(all.contains("idem.webhooks.sources.github.path /hooks/* is not an exact path"), all);
  }

  private static String messages(Throwable refused) {
    StringBuilder messages = new StringBuilder();
    for (Throwable t = refused; t != null; t = t.getCause()) {
      messages.append(t.getMessage()).append('\n');
    }
    return messages.toString();
  }
}
