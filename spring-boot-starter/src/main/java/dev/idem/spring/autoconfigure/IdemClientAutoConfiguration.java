package dev.idem.spring.autoconfigure;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.spring.client.IdempotencyExchangeFilter;
import dev.idem.spring.client.IdempotencyInterceptor;
import dev.idem.spring.internal.ClientPostProcessor;
import dev.idem.spring.internal.WebClientWiring;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.util.function.SingletonSupplier;

/**
 * The client side: the {@link IdempotencyInterceptor} on every {@code RestClient.Builder},
 * {@code RestTemplateBuilder} and {@code RestTemplate} bean, a WebClient filter on every {@code WebClient.Builder} bean (each put
 * last in its chain), and the outbox that delivers queued operations and those a restart left
 * pending. Off with {@code idem.client.enabled=false}.
 */
@AutoConfiguration(after = IdemAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.http.client.ClientHttpRequestInterceptor")
@ConditionalOnProperty(prefix = "idem.client", name = "enabled", matchIfMissing = true)
public class IdemClientAutoConfiguration {
  private static final Logger LOG = LoggerFactory.getLogger(IdemClientAutoConfiguration.class);

  /** Makes the auto-configuration; Spring calls it. */
  public IdemClientAutoConfiguration() {}

  /**
   * The interceptor, with {@code idem.client.*}'s key header, format, untagged policy and cap; its
   * {@code enqueue} refuses a name no outbox bean delivers.
   *
   * @param executor the executor
   * @param properties the settings
   * @param outbox the outbox beans, looked up at the first enqueue (they are made after the
   *     interceptor, with its resume transport)
   * @return the interceptor
   */
  @Bean
  @ConditionalOnMissingBean
  public IdempotencyInterceptor idemInterceptor(IdempotentExecutor executor, IdemProperties properties,
      ObjectProvider<OutboxDispatcher> outbox) {
    IdemProperties.Client c = properties.client();
    if (c.untaggedPolicy() == UntaggedPolicy.PASS_THROUGH) {
      LOG.warn("idem.client.untagged-policy=pass-through: a POST or PATCH without an IdempotentCall goes out without an"
          + " idempotency key and is not journaled; a retry of it may take effect twice");
    }
    return IdempotencyInterceptor.builder(executor).keyHeader(c.keyHeader()).keyFormat(c.keyFormat())
        .untaggedPolicy(c.untaggedPolicy()).maxBodyBytes(c.maxBodyBytes()).outboxes(outboxes(outbox)).build();
  }

  /**
   * Every outbox bean, for an enqueue check against the union of their names, looked up once one
   * exists: an app may declare several (a slow partner with a dispatcher of its own, its own
   * maxInFlight), each delivering its own names, so checking one of them (getIfUnique's primary)
   * would refuse the others'. None with {@code idem.outbox.enabled=false}, and then no name is
   * refused, as what delivers queued operations is the app's.
   */
  static Supplier<List<OutboxDispatcher>> outboxes(ObjectProvider<OutboxDispatcher> outbox) {
    return SingletonSupplier.of(() -> {
      List<OutboxDispatcher> all = outbox.orderedStream().toList();
      return all.isEmpty() ? null : all; // null: looked up again at the next enqueue
    });
  }

  /**
   * Puts Idem on the app's client builder beans.
   *
   * @param interceptor the interceptor
   * @param executor the executor
   * @param pool the journal pool
   * @param properties the settings
   * @param beans the bean factory, where the app's own WebClient filter bean is looked up
   * @param outbox the outbox beans, whose names the filters' enqueue checks against
   * @return the post-processor
   */
  @Bean
  public static ClientPostProcessor idemClientPostProcessor(ObjectProvider<IdempotencyInterceptor> interceptor,
      ObjectProvider<IdempotentExecutor> executor,
      @Qualifier(IdemAutoConfiguration.JOURNAL_POOL) ObjectProvider<Executor> pool,
      ObjectProvider<IdemProperties> properties, ListableBeanFactory beans, ObjectProvider<OutboxDispatcher> outbox) {
    Supplier<List<OutboxDispatcher>> delivering = outboxes(outbox);
    return new ClientPostProcessor(interceptor, executor, pool, b -> {
      IdemProperties.Client c = properties.getObject().client();
      b.keyHeader(c.keyHeader()).keyFormat(c.keyFormat()).untaggedPolicy(c.untaggedPolicy())
          .maxBodyBytes(c.maxBodyBytes()).outboxes(delivering);
    }, () -> properties.getObject().client().keyHeader(), beans);
  }

  /**
   * The outbox: delivers the operations named in {@code idem.outbox.operations} (queued ones, and
   * those a crash or restart left pending) through a JDK client with the journaled request, each
   * attempt bounded (its journaled timeout, else {@code idem.client.attempt-timeout}, else 30 s), plus
   * whatever {@link OutboxCustomizer} beans register. Started and drained by the lifecycle.
   *
   * @param executor the executor
   * @param interceptor the interceptor, whose resume transport it uses
   * @param properties the settings
   * @param customizers the app's customizers
   * @return the dispatcher, not started
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "idem.outbox", name = "enabled", matchIfMissing = true)
  public OutboxDispatcher idemOutbox(IdempotentExecutor executor, IdempotencyInterceptor interceptor,
      IdemProperties properties, ObjectProvider<OutboxCustomizer> customizers) {
    OutboxDispatcher.Builder b = OutboxDispatcher.builder(executor).syncWorkers(properties.outbox().workers());
    for (String name : properties.outbox().operations()) {
      // The interceptor's own JDK client, shared by these names: each attempt bounded, never unbounded.
      b.register(name, interceptor.resumeTransport(r -> Map.of()));
    }
    customizers.orderedStream().forEach(c -> c.customize(b));
    return b.build();
  }

  /** The WebClient side's own bean, for apps that build a WebClient without Boot's builder. */
  @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.web.reactive.function.client.WebClient")
  static class Reactive {
    @Bean(WebClientWiring.EXCHANGE_FILTER)
    @ConditionalOnMissingBean
    IdempotencyExchangeFilter idemExchangeFilter(IdempotentExecutor executor, IdemProperties properties,
        @Qualifier(IdemAutoConfiguration.JOURNAL_POOL) Executor pool, ObjectProvider<OutboxDispatcher> outbox) {
      IdemProperties.Client c = properties.client();
      return IdempotencyExchangeFilter.builder(executor).journalPool(pool).keyHeader(c.keyHeader())
          .keyFormat(c.keyFormat()).untaggedPolicy(c.untaggedPolicy()).maxBodyBytes(c.maxBodyBytes())
          .outboxes(outboxes(outbox)).build();
    }
  }
}
