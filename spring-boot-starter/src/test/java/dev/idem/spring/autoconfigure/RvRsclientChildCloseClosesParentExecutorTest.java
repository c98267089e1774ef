package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.springframework.test.web.client.response.MockRestResponseCreators.withSuccess;

import dev.idem.core.IdempotentExecutor;
import dev.idem.spring.client.IdempotencyInterceptor;
import dev.idem.spring.client.IdempotentCall;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.MediaType;
import org.springframework.test.web.client.ExpectedCount;
import org.springframework.test.web.client.MockRestServiceServer;
import org.springframework.web.client.RestClient;

/**
 * Closing the child of a context hierarchy closes the PARENT's executor. In a hierarchy where both
 * contexts are auto-configured (the outbox off here, so that the child starts at all: see
 * {@link RvRsclientChildContextStartsParentOutboxAgainTest}), the child has no executor of its own
 * ({@code @ConditionalOnMissingBean} finds the parent's) but it gets an {@code IdemLifecycle} of its
 * own ({@code IdemAutoConfiguration.idemLifecycle} has no condition), whose
 * {@code ObjectProvider<IdempotentExecutor>} resolves to the parent's executor. When the child
 * closes (a web child restarted, a child context of a test, a plugin context torn down), that
 * lifecycle's {@code stop} calls {@code executor.close()} on the parent's executor: the parent,
 * still running, then refuses every keyed call (and its outbox can record nothing), until the whole
 * app is restarted.
 *
 * <p>Expected: the parent's executor stays open, and a keyed call through the parent's interceptor
 * still goes out, after the child closed.
 */
class RvRsclientChildCloseClosesParentExecutorTest {
  @Test
  void closingTheChildLeavesTheParentsExecutorOpen(@TempDir Path dir) {
    ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false");
    runner.run(parent -> {
      assertNull(parent.getStartupFailure(), "the parent starts");
      RestClient.Builder builder = RestClient.builder().requestInterceptor(parent.getBean(IdempotencyInterceptor.class));
      MockRestServiceServer server = MockRestServiceServer.bindTo(builder).build();
      server.expect(ExpectedCount.twice(), request -> assertEquals("http://api.example/orders", request.getURI().toString()))
          .andRespond(withSuccess("created", MediaType.TEXT_PLAIN));
      RestClient client = builder.build();
      assertEquals("created", post(client), "a keyed call before the child exists");

      runner.withParent(parent).run(child -> assertNull(child.getStartupFailure(), "the child starts"));

      IdempotentExecutor executor = parent.getBean(IdempotentExecutor.class);
      String after;
      try {
        after = post(client);
      } catch (RuntimeException e) {
        after = "refused: " + e + (e.getCause() == null ? "" : " caused by " + e.getCause());
      }
      assertEquals("created", after, "a keyed call in the parent after the child closed (parent's executor closed: "
          + executor.isClosed() + ")");
      assertFalse(executor.isClosed(), "closing the child context closed the parent's executor");
    });
  }

  private static String post(RestClient client) {
    return client.post().uri("http://api.example/orders").attributes(IdempotentCall.named("create-order"))
        .body("order").retrieve().body(String.class);
  }
}
