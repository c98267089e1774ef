package dev.idem.spring.autoconfigure;

import dev.idem.core.outbox.OutboxDispatcher;

/**
 * Adds registrations to the starter's {@link OutboxDispatcher} before it is built: a bean of this
 * type registers, for example, the transport of an operation whose calls need a fresh
 * Authorization header after a restart (the journal never keeps it).
 *
 * <pre>{@code
 * @Bean
 * OutboxCustomizer payments(IdempotencyInterceptor idem, TokenSource tokens) {
 *   return outbox -> outbox.register("create-payment", idem.resumeTransport(new JdkClientHttpRequestFactory(),
 *       request -> Map.of("Authorization", "Bearer " + tokens.current())));
 * }
 * }</pre>
 *
 * The names in {@code idem.outbox.operations} are registered first, with the journaled request
 * as it is; do not register those again.
 */
@FunctionalInterface
public interface OutboxCustomizer {
  /**
   * Customizes the builder.
   *
   * @param builder the dispatcher's builder, before {@code build()}
   */
  void customize(OutboxDispatcher.Builder builder);
}
