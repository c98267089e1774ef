package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@link IdemProperties}' Javadoc promises that "a value that cannot mean what it says fails the
 * binding, and so the startup, with an IllegalArgumentException naming the property" (docs/spring.md
 * says the same of the values it lists). For the client side's values that the records do not check
 * themselves, the failure comes later, from the builders the auto-configuration feeds them to
 * ({@code RetryPolicy.Builder}, {@code IdempotentExecutor.Builder}, {@code OutboxDispatcher.Builder},
 * the interceptor's {@code AdapterBuilder}), and names the builder's parameter, never the property:
 * {@code idem.client.max-attempts=0} fails with "maxAttempts counts the first attempt and must be at
 * least 1: 0" inside "Error creating bean with name 'idemExecutor'", {@code idem.outbox.workers=0}
 * with "syncWorkers must be at least 1: 0" (a name that appears nowhere in the settings or the
 * docs), {@code idem.client.key-header=Idempotency Key} with "not a valid header name". Boot's
 * failure analysis shows no "Property: ..." line for them, as it does for the values the records
 * check ({@code idem.shutdown-timeout}, {@code idem.journal.max-request-body-bytes},
 * {@code idem.server.key-header}). An operator reading the crash loop has to guess which
 * {@code idem.*} key (or environment variable) to fix.
 *
 * <p>Expected: the startup failure names the property, as for {@code idem.server.key-header}.
 */
class RvRsclientBadClientValueUnnamedTest {
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "idem.client.max-attempts|0",
      "idem.client.deadline|0s",
      "idem.client.attempt-timeout|-1s",
      "idem.client.server-key-retention|0s",
      "idem.client.max-body-bytes|-1",
      "idem.client.key-header|Idempotency Key",
      "idem.outbox.workers|0"})
  void aBadClientValueFailsTheStartupNamingTheProperty(String property, String value, @TempDir Path dir) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, property + "=" + value).run(context -> {
          Throwable failure = context.getStartupFailure();
          assertNotNull(failure, property + "=" + value + " started the app");
          String messages = messages(failure);
          assertTrue(messages.contains(property), property + "=" + value + " failed the startup without naming the"
              + " property:\n" + messages);
        });
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append("  ").append(c.getClass().getSimpleName()).append(": ").append(c.getMessage()).append('\n');
    }
    return sb.toString();
  }
}
