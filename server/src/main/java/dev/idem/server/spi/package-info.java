/**
 * The guard's service-provider interface, for two kinds of extenders. Those who write a store of
 * their own implement {@link dev.idem.server.spi.IdempotencyStore} and exchange its records
 * ({@link dev.idem.server.spi.ClaimAttempt}, {@link dev.idem.server.spi.StoredRecord},
 * {@link dev.idem.server.spi.StoredResponse}); the built-in stores are user API in
 * {@link dev.idem.server} ({@code InMemoryIdempotencyStore}, {@code JdbcIdempotencyStore}). Those who
 * wire the guard into a web framework of their own, as the {@link dev.idem.server.servlet} and
 * {@link dev.idem.server.jdkhttp} filters do, handle an {@link dev.idem.server.spi.Admission} from
 * {@code IdempotencyGuard.admit} and a {@link dev.idem.server.spi.CompletionResult} from
 * {@code IdempotencyGuard.complete}. An application that uses a built-in store and filter names
 * {@code IdempotencyStore} at most, as the declared type of its store.
 */
package dev.idem.server.spi;
