package dev.idem.okhttp;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.RetryPolicy;
import java.util.Objects;
import java.util.Optional;

/**
 * Marks an OkHttp request as one logical operation, as a typed tag:
 *
 * <pre>{@code
 * Request request = new Request.Builder()
 *     .url(url).post(body)
 *     .tag(IdempotentOperation.class, IdempotentOperation.of("create-order").withScope("tenant-42"))
 *     .build();
 * }</pre>
 *
 * With Retrofit, declare a {@code @Tag IdempotentOperation op} parameter on the service method.
 *
 * <p>The key is fixed when the tag is created: {@link #of(String)} draws a fresh random key, once.
 * Every attempt of the call sends it, and so does a second execution of the same request (or a
 * {@code Call.clone()}, which copies tags): create one tag per logical operation, not per call.
 * To keep the key across a restart, store it ({@link #key()}) or derive it
 * ({@link IdempotencyKey#derive}) and pass it to {@link #withKey}.
 *
 * <p>A key header already on the request (the adapter's key header name) is the app's key: the
 * operation uses it instead of the drawn one, and if {@link #withKey} gave a different one the
 * call is refused before anything is sent (see {@link dev.idem.core.spi.adapter.AdapterSupport}).
 *
 * <p>Immutable and thread-safe; the {@code with} methods return copies.
 */
public final class IdempotentOperation {
  private final OperationId id;
  private final String reference;
  private final RetryPolicy policy;
  private final boolean keyChosen;

  private IdempotentOperation(OperationId id, String reference, RetryPolicy policy, boolean keyChosen) {
    this.id = id;
    this.reference = reference;
    this.policy = policy;
    this.keyChosen = keyChosen;
  }

  /**
   * An operation in the default scope with a fresh random key.
   *
   * @return an operation in the default scope with a fresh random key
   * @param name the operation name, such as {@code create-order}; resume handlers are registered
   *     by this name
   * @throws IllegalArgumentException if the name is blank or longer than 200 characters
   */
  public static IdempotentOperation of(String name) {
    return new IdempotentOperation(new OperationId(OperationId.DEFAULT_SCOPE, name, IdempotencyKey.generate()),
        null, null, false);
  }

  /**
   * A copy in another scope (caller or tenant), with the same key.
   *
   * @param scope the scope, 1 to 200 characters
   * @return a copy in another scope (caller or tenant), with the same key
   */
  public IdempotentOperation withScope(String scope) {
    return new IdempotentOperation(new OperationId(scope, id.operation(), id.key()), reference, policy, keyChosen);
  }

  /**
   * A copy with a key the app stored or derived.
   *
   * @param key the key
   * @return a copy with a key the app stored or derived
   */
  public IdempotentOperation withKey(IdempotencyKey key) {
    return new IdempotentOperation(new OperationId(id.scope(), id.operation(), key), reference, policy, true);
  }

  /**
   * A copy with the app's own reference (1 to 200 characters, no personal data), to find the
   * operation in the journal later.
   *
   * @param reference the reference
   * @return a copy with the app's own reference (1 to 200 characters, no personal data), to find the operation in the journal later
   */
  public IdempotentOperation withReference(String reference) {
    return new IdempotentOperation(id, Objects.requireNonNull(reference, "reference"), policy, keyChosen);
  }

  /**
   * A copy with a retry policy for this operation only, instead of the executor's.
   *
   * @param policy the policy
   * @return a copy with a retry policy for this operation only, instead of the executor's
   */
  public IdempotentOperation withPolicy(RetryPolicy policy) {
    return new IdempotentOperation(id, reference, Objects.requireNonNull(policy, "policy"), keyChosen);
  }

  /**
   * The identity: scope, name and key.
   *
   * @return the identity: scope, name and key
   */
  public OperationId id() {
    return id;
  }

  /**
   * Whether the app chose the key ({@link #withKey}) rather than taking the one {@link #of} drew.
   * A key header already on the request replaces a drawn key; it must equal a chosen one, or the
   * call is refused before anything is sent.
   *
   * @return true if the key came from {@link #withKey}
   */
  public boolean hasChosenKey() {
    return keyChosen;
  }

  /**
   * The key sent on every attempt.
   *
   * @return the key sent on every attempt
   */
  public IdempotencyKey key() {
    return id.key();
  }

  /**
   * The app's reference, if any.
   *
   * @return the app's reference, if any
   */
  public Optional<String> reference() {
    return Optional.ofNullable(reference);
  }

  /**
   * The per-operation retry policy, if any.
   *
   * @return the per-operation retry policy, if any
   */
  public Optional<RetryPolicy> policy() {
    return Optional.ofNullable(policy);
  }

  /**
   * The core operation for a snapshot of the tagged request; the interceptor calls this.
   *
   * @return the core operation for a snapshot of the tagged request
   * @param request the snapshot, secrets included (the executor keeps them out of the journal)
   */
  public Operation toOperation(RequestSnapshot request) {
    Operation.Builder b = Operation.builder(id.operation(), request).scope(id.scope()).key(id.key());
    if (reference != null) {
      b.reference(reference);
    }
    if (policy != null) {
      b.policy(policy);
    }
    return b.build();
  }

  /** The identity only; never request data. */
  @Override
  public String toString() {
    return "IdempotentOperation{" + id + (reference != null ? ", reference=" + reference : "") + "}";
  }
}
