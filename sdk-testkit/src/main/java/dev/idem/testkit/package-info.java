/**
 * A reference idempotent server on MockWebServer, with scripted faults, for testing clients that
 * retry non-idempotent calls.
 *
 * <ul>
 *   <li>{@link dev.idem.testkit.IdempotentServer}: the server half of Idem's protocol (atomic claim
 *       per caller, operation and key; fingerprint check; stored-result replay; effect counters).
 *   <li>{@link dev.idem.testkit.FaultPlan} and {@link dev.idem.testkit.Fault}: lost responses,
 *       dropped requests, timeouts, 5xx, 429, slow in-flight requests.
 *   <li>{@link dev.idem.testkit.IdempotentServerExtension}: one server per JUnit Jupiter test.
 * </ul>
 */
package dev.idem.testkit;
