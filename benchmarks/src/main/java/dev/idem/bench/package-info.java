/**
 * The end-to-end benchmark of a keyed POST: Idem against raw OkHttp and the peers (Failsafe,
 * resilience4j-retry, a Stripe-style random key), on one loopback server, with a JFR breakdown of
 * where Idem's time and allocations go. A program run by {@code -Pbench-e2e}, never a test and never
 * published; see {@link dev.idem.bench.EndToEndBenchmark}.
 */
package dev.idem.bench;
