/**
 * Metrics: {@link dev.idem.webhooks.metrics.MicrometerWebhookMetrics} publishes the inbox's queue
 * length, processing delay, dead letters and rejections to Micrometer. Micrometer is an optional
 * dependency; only apps that use this package need it.
 */
package dev.idem.webhooks.metrics;
