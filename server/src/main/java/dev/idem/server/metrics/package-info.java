/**
 * Metrics: {@link dev.idem.server.metrics.MicrometerGuardMetrics} publishes the guard's records by
 * state, the oldest claim in flight, stuck claims, key conflicts, payload mismatches, takeovers and
 * replays to Micrometer. Micrometer is an optional dependency; only apps that use this package need
 * it.
 */
package dev.idem.server.metrics;
