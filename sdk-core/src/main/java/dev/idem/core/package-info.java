/**
 * The core of Idem: keys, operation identity, request snapshots and fingerprints, the state machine,
 * retry policy, classification, the journal SPI and the executor. It has no HTTP client.
 */
package dev.idem.core;
