package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.client.IdempotencyExchangeFilter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The WebClient side of {@link MutatedRestClientReviewTest}: docs/spring.md puts Idem's filter last
 * "at each build()", but a client made with {@code webClient.mutate()} is built by a plain builder
 * that already holds Idem's filter, so a filter the app adds there (authentication) lands after it
 * and runs again on every attempt instead of once before Idem's.
 *
 * <p>Expected: Idem's filter is last in a client made with mutate(), as in one made from the bean.
 */
class MutatedWebClientReviewTest {
  @Test
  void aFilterAddedThroughMutateRunsBeforeIdems(@TempDir Path dir) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false")
        .withBean(WebClient.Builder.class, WebClient::builder)
        .run(context -> {
          ExchangeFilterFunction auth = (request, next) -> next.exchange(request);
          WebClient authed = context.getBean(WebClient.Builder.class).build().mutate().filter(auth).build();
          List<ExchangeFilterFunction> chain = new ArrayList<>();
          authed.mutate().filters(chain::addAll);
          assertEquals(2, chain.size(), "filters: " + chain);
          assertEquals(auth, chain.get(0), "the app's filter is not first: " + chain);
          assertInstanceOf(IdempotencyExchangeFilter.class, chain.get(1), "Idem's filter is not last: " + chain);
        });
  }
}
