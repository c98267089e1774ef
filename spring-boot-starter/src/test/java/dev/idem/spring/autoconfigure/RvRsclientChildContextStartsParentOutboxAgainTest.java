package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.spring.internal.IdemLifecycle;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * A context hierarchy where both contexts are auto-configured (Boot's
 * {@code new SpringApplicationBuilder(Parent.class).child(Web.class)}, both
 * {@code @EnableAutoConfiguration}; docs/spring.md names this hierarchy as one the starter serves)
 * cannot start its child with the client side at its defaults. The journal, the executor and the
 * outbox back off in the child ({@code @ConditionalOnMissingBean} sees the parent's), but
 * {@code IdemAutoConfiguration.idemLifecycle} has no condition: the child gets an
 * {@link IdemLifecycle} of its own over the PARENT's {@link OutboxDispatcher} (its
 * {@code ObjectProvider.orderedStream()} includes ancestors), and its {@code start()} calls
 * {@code OutboxDispatcher.start()} a second time, which throws "the dispatcher is RUNNING; start it
 * once". The child (the web app) fails to start. {@code ParentChildContextReviewTest} in
 * spring-boot3-tests only passes because it sets {@code idem.client.enabled=false} and
 * {@code idem.outbox.enabled=false}.
 *
 * <p>Expected: the child starts and shares the parent's executor and outbox, which only the parent
 * starts and stops.
 */
class RvRsclientChildContextStartsParentOutboxAgainTest {
  @Test
  void anAutoConfiguredChildOfAnAutoConfiguredParentStarts(@TempDir Path dir) {
    ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir);
    runner.run(parent -> {
      assertNull(parent.getStartupFailure(), "the parent starts");
      runner.withParent(parent).run(child -> {
        Throwable failure = child.getStartupFailure();
        assertNull(failure, () -> "the child of an auto-configured parent did not start (its own idemLifecycle"
            + " started the parent's outbox again):" + trace(failure));
      });
    });
  }

  /**
   * The other side of the rule: an outbox the child defines itself (a partner's, over the parent's
   * executor) is the child's to start and stop, which one lifecycle per hierarchy (the parent's)
   * would never start; and the child's close leaves the parent's outbox running.
   * {@code start()} throws naming the dispatcher's state, the only state it shows.
   */
  @Test
  void aChildStartsItsOwnOutboxAndLeavesTheParentsRunning(@TempDir Path dir) {
    ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir);
    runner.run(parent -> {
      assertNull(parent.getStartupFailure(), "the parent starts");
      OutboxDispatcher parents = parent.getBean(OutboxDispatcher.class);
      OutboxDispatcher childs = OutboxDispatcher.builder(parent.getBean(IdempotentExecutor.class))
          .register("partner-order", (request, key) -> {
            throw new IOException("not called: nothing is submitted");
          }).build();
      runner.withParent(parent).withBean("partnerOutbox", OutboxDispatcher.class, () -> childs).run(child -> {
        assertNull(child.getStartupFailure(), () -> "the child starts:" + trace(child.getStartupFailure()));
        assertState(childs, "RUNNING", "the child's own outbox, while the child runs");
      });
      assertState(childs, "STOPPED", "the child's own outbox, after the child closed");
      assertState(parents, "RUNNING", "the parent's outbox, after the child closed");
    });
  }

  private static void assertState(OutboxDispatcher outbox, String state, String which) {
    IllegalStateException e = assertThrows(IllegalStateException.class, outbox::start, which + " was never started");
    assertTrue(e.getMessage().startsWith("the dispatcher is " + state + ";"), which + ": " + e.getMessage());
  }

  private static String trace(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append("\n  ").append(c);
    }
    return sb.toString();
  }
}
