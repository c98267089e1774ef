package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.client.IdempotencyInterceptor;
import java.net.URI;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.http.RequestEntity;
import org.springframework.http.client.JdkClientHttpRequestFactory;

/**
 * docs/spring.md: "With idem.outbox.enabled=false (or more than one OutboxDispatcher bean of the
 * app's own) no name is refused: what delivers is the app's." But an app with two dispatcher beans
 * must mark one {@code @Primary} (the starter's lifecycle looks the outbox up with
 * {@code getIfAvailable}, which fails the startup on two beans without a primary), and then
 * {@code getIfUnique} returns the primary: {@code enqueue} of a name the OTHER dispatcher bean
 * delivers is refused ("no transport is registered"), though that dispatcher sends it. Before the
 * check, such an enqueue was journaled and delivered by the second dispatcher.
 *
 * <p>Expected: the enqueue is accepted (no name refused with more than one dispatcher bean, as the
 * docs say; or a name is checked against the union of every OutboxDispatcher bean's names).
 * Actual: IllegalArgumentException naming only the primary dispatcher's names.
 */
class EnqueueSecondDispatcherReviewTest {
  @Test
  void aNameTheAppsSecondDispatcherBeanDeliversIsNotRefused(@TempDir Path dir) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.shutdown-timeout=0s")
        .withUserConfiguration(TwoDispatchers.class)
        .run(context -> {
          assertNull(context.getStartupFailure());
          IdempotencyInterceptor idem = context.getBean(IdempotencyInterceptor.class);
          assertDoesNotThrow(() -> idem.enqueue("partner-b", IdempotencyKey.generate(),
              RequestEntity.post(URI.create("http://127.0.0.1:9/b")).body("{}")),
              "partner-b is delivered by the app's second OutboxDispatcher bean");
        });
  }

  @Configuration(proxyBeanMethods = false)
  static class TwoDispatchers {
    @Bean(destroyMethod = "close")
    @Primary
    OutboxDispatcher partnerA(IdempotentExecutor executor, IdempotencyInterceptor idem) {
      return OutboxDispatcher.builder(executor)
          .register("partner-a", idem.resumeTransport(new JdkClientHttpRequestFactory())).build();
    }

    @Bean(destroyMethod = "close")
    OutboxDispatcher partnerB(IdempotentExecutor executor, IdempotencyInterceptor idem) {
      return OutboxDispatcher.builder(executor).maxInFlight(2)
          .register("partner-b", idem.resumeTransport(new JdkClientHttpRequestFactory())).build();
    }
  }
}
