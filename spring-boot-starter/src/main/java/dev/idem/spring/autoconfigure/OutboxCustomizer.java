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
 *   return outbox -> outbox.register("create-payment",
 *       idem.resumeTransport(request -> Map.of("Authorization", "Bearer " + tokens.current())));
 * }
 * }</pre>
 *
 * That transport bounds each attempt as the starter's own deliveries are (the request's journaled
 * timeout, else {@code idem.client.attempt-timeout}, else 30 s). A transport built on the app's own
 * request factory ({@code idem.resumeTransport(factory, ...)}) is bounded by that factory's timeouts
 * instead: give it a read timeout.
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
