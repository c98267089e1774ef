package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemServerAutoConfiguration;
import java.nio.file.Path;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.sqlite.SQLiteDataSource;

/**
 * The starter feeds {@code idem.owner} (else {@code HOSTNAME}) to the executor, whose owner may be
 * up to 200 characters of anything but control characters and unpaired surrogates, and, with
 * {@code idem.server.store=datasource}, to the guard as its {@code instanceId}, which must be 1 to
 * 100 of {@code [A-Za-z0-9._:-]}. An owner the executor takes ({@code orders/pod-1}, or a 150-character
 * name) then fails the startup in the guard with "instanceId must be 1 to 100 letters, ...": neither
 * {@code idem.owner} nor {@code HOSTNAME} is named, nor is the guard's narrower rule documented
 * with {@code idem.owner} (docs/spring.md, docs/fleet.md give only the executor's 200 characters).
 * Commit 546fbb5a wrapped the executor's and the webhook processor's refusals, not the guard's.
 *
 * <p>Expected: the startup failure names idem.owner (as the executor's refusal now does).
 */
class GuardInstanceOwnerReviewTest {
  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemServerAutoConfiguration.class));

  @Test
  void anOwnerWithASlashTheExecutorTakesFailsInTheGuardNamingIdemOwner(@TempDir Path dir) {
    startsNamingIdemOwner(dir, "orders/pod-1");
  }

  @Test
  void anOwnerOf150CharactersTheExecutorTakesFailsInTheGuardNamingIdemOwner(@TempDir Path dir) {
    startsNamingIdemOwner(dir, "p".repeat(150));
  }

  private void startsNamingIdemOwner(Path dir, String owner) {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + dir.resolve("app.db"));
    runner.withBean(DataSource.class, () -> ds)
        .withPropertyValues("idem.directory=" + dir.resolve("idem"), "idem.server.store=datasource",
            "idem.owner=" + owner)
        .run(context -> {
          Throwable failure = context.getStartupFailure();
          if (failure == null) {
            return; // the guard took the name: nothing to explain
          }
          String messages = messages(failure);
          assertTrue(messages.contains("idem.owner"),
              "idem.owner=" + owner + " (taken by the executor) failed the startup without naming idem.owner or"
                  + " HOSTNAME:\n" + messages);
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
