package dev.idem.server;

import dev.idem.server.internal.ProblemJsonRenderer;
import dev.idem.server.internal.StripeRenderer;
import java.util.List;
import java.util.Map;

/**
 * Shapes the answers the guard gives itself, for the clients of an API: its refusals (missing,
 * malformed or reused key, a key in flight, a lost claim, a body too large, the store unavailable)
 * and the headers it adds to a replay. Client libraries read these: Stripe's, for example, treat
 * any JSON body without an {@code error} member as a success, so an API whose clients are written
 * for Stripe answers in {@link #stripe()}'s shape.
 *
 * <p>Implementations must be thread-safe and must not throw. They see no key and no request data,
 * only the {@link Refusal}.
 */
public interface GuardRenderer {
  /**
   * The response for a refusal.
   *
   * @param refusal what the guard refuses, with its suggested status, texts and {@code Retry-After}
   * @return what to send
   */
  GuardResponse refusal(Refusal refusal);

  /**
   * The headers added to every replayed result (unless the guard's
   * {@linkplain IdempotencyGuard.Builder#replayMarker replay marker} is off). Default
   * {@value IdempotencyGuard#REPLAYED_HEADER}{@code : true}.
   *
   * @return header names to values
   */
  default Map<String, List<String>> replayHeaders() {
    return Map.of(IdempotencyGuard.REPLAYED_HEADER, List.of("true"));
  }

  /**
   * The default: RFC 9457 problem documents ({@code application/problem+json}) with the statuses of
   * the IETF Idempotency-Key draft (400 missing or malformed, 409 in flight, 422 reused), type URIs
   * under {@code urn:idem:problem:}, and the suggested {@code Retry-After}.
   *
   * @return the renderer
   */
  static GuardRenderer problemJson() {
    return ProblemJsonRenderer.INSTANCE;
  }

  /**
   * Stripe's shape, for APIs whose clients are Stripe's libraries or written like them: a JSON body
   * {@code {"error":{"type":...,"code":...,"message":...}}} on every refusal, so that such a client
   * raises an error instead of returning an empty object. A key reused with another payload is 400
   * {@code idempotency_error} (whatever the mismatch status), a key in flight 409
   * {@code idempotency_error} with code {@code idempotency_key_in_use} and
   * {@code Stripe-Should-Retry: true}, a store failure 503 {@code api_error} with
   * {@code Stripe-Should-Retry: true}; refusals a retry cannot fix carry
   * {@code Stripe-Should-Retry: false}. Replays carry {@code Idempotent-Replayed: true}, as Stripe
   * sends.
   *
   * @return the renderer
   */
  static GuardRenderer stripe() {
    return StripeRenderer.INSTANCE;
  }
}
