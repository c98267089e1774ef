package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Every other bad idem.* value (a zero deadline, max-attempts=0, a negative retention, workers=0)
 * fails the startup with the property's complaint. Two do not:
 * <ul>
 *   <li>{@code idem.shutdown-timeout=-5s} starts; at shutdown the outbox's drain is skipped at once
 *       (the drain timer fires immediately) and the log says it "did not drain within PT-5S".</li>
 *   <li>{@code idem.directory=} (blank, as {@code ${IDEM_DIR:}} gives when the variable is unset)
 *       starts, with the journal and the guard's records in the process's working directory instead
 *       of the persistent volume the docs ask for ("keep it on a persistent volume: it holds the keys
 *       of operations still to deliver"): after a redeploy those keys are gone.</li>
 * </ul>
 *
 * <p>Expected: both fail the startup, naming the property.
 */
class BadPropertiesStartReviewTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class));

  @Test
  void aNegativeShutdownTimeoutFailsTheStartup(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir, "idem.shutdown-timeout=-5s").run(context -> {
      assertNotNull(context.getStartupFailure(), "idem.shutdown-timeout=-5s started the app");
      assertTrue(messages(context.getStartupFailure()).contains("shutdown-timeout"),
          messages(context.getStartupFailure()));
    });
  }

  @Test
  void aBlankDirectoryFailsTheStartupRatherThanJournalingInTheWorkingDirectory() {
    Path cwdJournal = Path.of("").toAbsolutePath().resolve("journal");
    boolean existedBefore = Files.exists(cwdJournal);
    try {
      runner.withPropertyValues("idem.directory=").run(context -> {
        assertNotNull(context.getStartupFailure(),
            "idem.directory= (blank) started the app, journaling in the working directory: " + cwdJournal);
        assertTrue(messages(context.getStartupFailure()).contains("idem.directory"),
            messages(context.getStartupFailure()));
      });
    } finally {
      if (!existedBefore) {
        deleteQuietly(cwdJournal);
      }
    }
  }

  /**
   * The executor refuses an owner its journal would not store as given (over 200 characters, as a
   * long pod name, control characters); the starter passes {@code idem.owner}, or {@code HOSTNAME}
   * when it is unset, and the startup failure must say which setting to change.
   */
  @Test
  void anOwnerTheJournalCannotStoreFailsTheStartupNamingTheProperty(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir, "idem.owner=" + "p".repeat(201)).run(context -> {
      assertNotNull(context.getStartupFailure(), "an owner of 201 characters started the app");
      assertTrue(messages(context.getStartupFailure()).contains("idem.owner"), messages(context.getStartupFailure()));
    });
  }

  private static void deleteQuietly(Path p) {
    try (var files = Files.walk(p)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (Exception ignored) {
      // nothing to clean
    }
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append('\n');
    }
    return sb.toString();
  }
}
