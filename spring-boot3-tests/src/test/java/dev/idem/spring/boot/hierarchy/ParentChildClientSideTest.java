package dev.idem.spring.boot.hierarchy;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.outbox.OutboxDispatcher;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A hierarchy built the way Boot documents it ({@code new SpringApplicationBuilder(Parent.class)
 * .child(Web.class)}, both auto-configured) with the client side at its defaults (client and
 * outbox on): the web child uses the parent's executor and outbox, which only the parent's
 * lifecycle starts and stops. The child's own lifecycle used to start the parent's outbox again
 * (the child failed to start) and, at the child's close, close the parent's executor.
 */
class ParentChildClientSideTest {
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class Parent {}

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class Web {}

  @Test
  void aWebChildSharesTheParentsExecutorAndOutboxAndItsCloseLeavesThemRunning() throws Exception {
    Path dir = Files.createTempDirectory("idem-hierarchy-client-");
    ConfigurableApplicationContext web = new SpringApplicationBuilder(Parent.class)
        .properties("idem.directory=" + dir.resolve("idem"), "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
            "server.port=0", "spring.main.banner-mode=off")
        .child(Web.class).web(WebApplicationType.SERVLET).run();
    ConfigurableApplicationContext parent = (ConfigurableApplicationContext) web.getParent();
    IdempotentExecutor executor = parent.getBean(IdempotentExecutor.class);
    try {
      OutboxDispatcher outbox = parent.getBean(OutboxDispatcher.class);
      assertSame(executor, web.getBean(IdempotentExecutor.class), "the child uses the parent's executor");
      assertSame(outbox, web.getBean(OutboxDispatcher.class), "the child uses the parent's outbox");

      web.close();

      assertFalse(executor.isClosed(), "the child's close closed the parent's executor");
      // start() names the dispatcher's state, the only place it shows it: still running.
      IllegalStateException e = assertThrows(IllegalStateException.class, outbox::start);
      assertTrue(e.getMessage().startsWith("the dispatcher is RUNNING;"), e.getMessage());
    } finally {
      web.close();
      parent.close();
    }
    assertTrue(executor.isClosed(), "the parent's close closes its executor");
  }
}
