package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * With an {@code IdempotentExecutor} bean of the app's own (and its own journal), the starter still
 * opens its embedded journal in {@code idem.directory/journal}: a SQLite file, its lock and a
 * group-commit thread that nothing writes to, and a second process on the same directory (the app's
 * executor may well journal there) is refused as "another process has the journal".
 *
 * <p>Expected: no journal of the starter's own is opened when the app brings its executor.
 */
class OwnExecutorOpensNoJournalReviewTest {
  @Test
  void theStarterOpensNoJournalBesideTheAppsExecutor(@TempDir Path dir) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false")
        .withBean(IdempotentExecutor.class, () -> IdempotentExecutor.builder().journal(new InMemoryJournal()).build())
        .run(context -> {
          assertNull(context.getStartupFailure());
          Map<String, JdbcJournal> opened = context.getBeansOfType(JdbcJournal.class);
          assertEquals(Map.of(), opened, "the starter opened a journal no executor uses");
          assertFalse(Files.exists(dir.resolve("journal")), "a journal was opened in " + dir.resolve("journal"));
        });
  }
}
