package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.client.IdempotencyExchangeFilter;
import dev.idem.spring.client.IdempotencyInterceptor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * "Declaring a bean of the same type replaces Idem's" (docs/spring.md): an app's own
 * IdempotencyInterceptor bean is the one on its RestClient.Builder beans; its own
 * IdempotencyExchangeFilter bean must likewise be the one on its WebClient.Builder beans.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class OwnFilterBeanTest {
  @Test
  void theAppsOwnInterceptorBeanIsTheOneOnItsRestClientBuilder(@TempDir Path dir) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withUserConfiguration(Own.class)
        .withBean("restClientBuilder", RestClient.Builder.class, RestClient::builder)
        .withPropertyValues("idem.directory=" + dir).run(context -> {
          List<ClientHttpRequestInterceptor> seen = new ArrayList<>();
          context.getBean(RestClient.Builder.class).build().mutate().requestInterceptors(seen::addAll);
          assertEquals(List.of(context.getBean(IdempotencyInterceptor.class)), seen);
        });
  }

  @Test
  void theAppsOwnFilterBeanIsTheOneOnItsWebClientBuilder(@TempDir Path dir) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withUserConfiguration(Own.class)
        .withBean("webClientBuilder", WebClient.Builder.class, WebClient::builder)
        .withPropertyValues("idem.directory=" + dir).run(context -> {
          List<ExchangeFilterFunction> seen = new ArrayList<>();
          context.getBean(WebClient.Builder.class).build().mutate().filters(seen::addAll);
          assertEquals(List.of(context.getBean(IdempotencyExchangeFilter.class)), seen,
              "the WebClient.Builder bean got a filter of Idem's own (key header Idempotency-Key), not the app's");
        });
  }

  @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
  static class Own {
    @org.springframework.context.annotation.Bean
    IdempotencyInterceptor ownInterceptor(IdempotentExecutor executor) {
      return IdempotencyInterceptor.builder(executor).keyHeader("X-Request-Key").build();
    }

    @org.springframework.context.annotation.Bean
    IdempotencyExchangeFilter ownFilter(IdempotentExecutor executor) {
      return IdempotencyExchangeFilter.builder(executor).keyHeader("X-Request-Key").build();
    }
  }
}
