/**
 * What the executor keeps per target host so that retries cannot make an outage worse: a circuit
 * breaker ({@link dev.idem.core.host.CircuitBreakerSettings}) and a retry budget
 * ({@link dev.idem.core.host.RetryBudget}), both on by default and set on the executor's builder.
 * For applications that tune or replace them.
 */
package dev.idem.core.host;
