/**
 * The server half of the idempotency protocol (seed 000): an idempotency guard for Java services.
 * An application builds an {@link dev.idem.server.IdempotencyGuard} on a store
 * ({@link dev.idem.server.JdbcIdempotencyStore}, {@link dev.idem.server.InMemoryIdempotencyStore}),
 * sets its policies, and serves it through a filter ({@link dev.idem.server.servlet},
 * {@link dev.idem.server.jdkhttp}) or in a transaction of its own
 * ({@link dev.idem.server.TransactionalHandler}); operators list its records. What a store of
 * one's own implements, and what a framework adapter handles, is in {@link dev.idem.server.spi};
 * {@code dev.idem.server.internal} is for this module only.
 */
package dev.idem.server;
