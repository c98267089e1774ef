/**
 * The core of Idem, as an application uses it: build an {@link dev.idem.core.IdempotentExecutor}
 * on a journal, run {@link dev.idem.core.Operation}s with one {@link dev.idem.core.IdempotencyKey}
 * across every attempt, read their {@link dev.idem.core.Outcome} or catch the
 * {@link dev.idem.core.OperationException} that says why there is none, look them up as
 * {@link dev.idem.core.OperationRecord}s, and tune retries ({@link dev.idem.core.RetryPolicy},
 * {@link dev.idem.core.Classifier}, {@link dev.idem.core.ProtocolStatuses}). It has no HTTP client.
 *
 * <p>This package is kept to what a user reads (at most 25 public types; the build's architecture
 * test holds the ceiling). The rest is layered around it:
 * <ul>
 *   <li>features an app uses when it needs them: {@link dev.idem.core.resume} (journaled
 *       operations picked up after a restart, reconciled or expired), {@link dev.idem.core.event}
 *       (listeners), {@link dev.idem.core.host} (the per-host circuit breaker and retry budget),
 *       {@link dev.idem.core.fingerprint} (what identifies a request's intent),
 *       {@link dev.idem.core.http} (what every HTTP adapter's users configure and catch),
 *       {@link dev.idem.core.outbox}, {@link dev.idem.core.metrics},
 *       {@link dev.idem.core.resilience4j};</li>
 *   <li>{@link dev.idem.core.spi} and {@link dev.idem.core.spi.adapter}: what those who write a
 *       journal, a transport or an adapter implement and use;</li>
 *   <li>{@code dev.idem.core.internal}: implementation, for this module only.</li>
 * </ul>
 */
package dev.idem.core;
