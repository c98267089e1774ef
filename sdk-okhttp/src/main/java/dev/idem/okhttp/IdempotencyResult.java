package dev.idem.okhttp;

import dev.idem.core.AttemptRecord;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.okhttp.internal.CallResult;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import okhttp3.Request;
import okhttp3.Response;

/**
 * What Idem did for a response the interceptor returned. It rides on {@code response.request()}
 * (as a tag, itself or in a holder); read it with {@link #of(Response)}:
 *
 * <pre>{@code
 * try (Response r = client.newCall(request).execute()) {
 *   boolean replayed = IdempotencyResult.of(r).map(IdempotencyResult::replayed).orElse(false);
 * }
 * }</pre>
 *
 * The server's own {@code Idempotent-Replayed} header is left on the response as well.
 *
 * @param operationId the operation, with the key sent on every attempt
 * @param state SUCCEEDED for a 2xx; FAILED for a permanent refusal (such as a 404) or transient
 *     failures that ran out of attempts without any ambiguity, whose last response is returned
 * @param replayed true if the server marked the response as a replay of an earlier attempt's result
 * @param fromJournal true if nothing was sent by this call: the journal (or a concurrent call with
 *     the same key) already had the result
 * @param attempts every recorded attempt, oldest first
 */
public record IdempotencyResult(OperationId operationId, OperationState state, boolean replayed, boolean fromJournal,
    List<AttemptRecord> attempts) {
  /**
   * Makes the result, copying {@code attempts}.
   *
   * @param operationId the operation
   * @param state its state when the call returned
   * @param replayed true if the server marked the response as a replay
   * @param fromJournal true if nothing was sent by this call
   * @param attempts every recorded attempt, oldest first
   * @throws NullPointerException if {@code attempts} is null or holds null
   */
  public IdempotencyResult {
    Objects.requireNonNull(operationId, "operationId");
    Objects.requireNonNull(state, "state");
    attempts = List.copyOf(attempts);
  }

  /**
   * The result attached to a response by the interceptor.
   *
   * @param response a response from a client with the idempotency interceptor
   * @return empty for a response that did not go through Idem (an untagged pass-through request)
   */
  public static Optional<IdempotencyResult> of(Response response) {
    Request request = response.request();
    IdempotencyResult tagged = request.tag(IdempotencyResult.class);
    if (tagged != null) {
      return Optional.of(tagged);
    }
    CallResult slot = request.tag(CallResult.class);
    return Optional.ofNullable(slot == null ? null : slot.get());
  }
}
