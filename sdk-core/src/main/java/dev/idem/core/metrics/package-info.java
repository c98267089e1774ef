/**
 * Metrics: {@link dev.idem.core.metrics.MicrometerMetrics} turns Idem's events and journal into
 * Micrometer meters. Micrometer is an optional dependency; only apps that use this package need it.
 */
package dev.idem.core.metrics;
