/**
 * What happened, for those who watch: an {@link dev.idem.core.event.IdemListener}, set on the
 * executor's builder, hears every {@link dev.idem.core.event.IdemEvent} (operations, attempts,
 * retries, a host's circuit breaker and retry budget), for logs and metrics. The Micrometer
 * binding in {@link dev.idem.core.metrics} is one such listener. For applications.
 */
package dev.idem.core.event;
