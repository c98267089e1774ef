/**
 * For teams that already configure resilience4j-retry: {@link
 * dev.idem.core.resilience4j.Resilience4jRetryAdapter} turns a {@code RetryConfig} into Idem's
 * retry policy and classifier. resilience4j-retry is an optional dependency; only apps that use
 * this package need it.
 */
package dev.idem.core.resilience4j;
