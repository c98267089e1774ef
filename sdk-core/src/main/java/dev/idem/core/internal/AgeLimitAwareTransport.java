package dev.idem.core.internal;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

/**
 * An {@link AsyncTransport} of sdk-core's own that may hold an attempt after the executor handed
 * it over, before it sends it (the outbox's worker pool queues it for a worker). The executor
 * checks the operation's age limit at its claim, just before the hand-over; an attempt held past
 * the limit would still go out with a key the server may have forgotten, so {@link AsyncDriver}
 * gives such a transport the limit, and the transport checks it again when the attempt leaves its
 * hold: at or past it, the attempt fails with {@link PastAgeLimitException}, unsent, and the
 * executor ends the operation as the age limit ends it anywhere else.
 *
 * <p>Internal: the executor only passes the limit to an execution with an age limit (queued
 * delivery, or an inline call of an operation journaled before it; not under
 * {@code ExpiredPendingAction.RESEND}); otherwise it calls the plain
 * {@link #sendAsync(RequestSnapshot, IdempotencyKey)}. Implementations are thread-safe, as any
 * {@link AsyncTransport}.
 */
public interface AgeLimitAwareTransport extends AsyncTransport {
  /**
   * {@link #sendAsync(RequestSnapshot, IdempotencyKey)}, sending nothing at or past
   * {@code ageLimit}: the future then fails with {@link PastAgeLimitException}.
   *
   * @param ageLimit from this instant the attempt is not sent
   */
  CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key, Instant ageLimit);
}
