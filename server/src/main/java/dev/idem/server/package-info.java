/** The server half of the idempotency protocol (seed 000): an idempotency guard for Java services. */
package dev.idem.server;
