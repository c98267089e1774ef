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
 *
 * <p>For one key per business reference, with nothing stored, use {@link #forReference}: every
 * submission of {@code ("create-order", "cart-42")} gets the same key, derived by the executor from
 * the reference with its {@link dev.idem.core.IdempotentExecutor.Builder#referenceKeySecret secret},
 * in this process and after a restart, so a resubmission is answered by the server's replay
 * instead of running twice. {@link #withReference} only labels an operation for lookups.
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
  /** The key is derived from the reference by the executor; {@code id}'s key is a placeholder. */
  private final boolean keyFromReference;

  private IdempotentOperation(OperationId id, String reference, RetryPolicy policy, boolean keyChosen,
      boolean keyFromReference) {
    this.id = id;
    this.reference = reference;
    this.policy = policy;
    this.keyChosen = keyChosen;
    this.keyFromReference = keyFromReference;
  }

  /**
   * An operation in the default scope whose key is derived from a business reference by the
   * executor that runs it (HMAC-SHA256 with its
   * {@link dev.idem.core.IdempotentExecutor.Builder#referenceKeySecret secret} over scope, name and
   * reference): every submission of the same reference gets the same key, even after a restart
   * with an empty journal, and the server runs it once. The call fails with
   * {@link IllegalStateException} before anything is journaled or sent if the executor has no
   * secret. The reference is journaled as with {@link #withReference}.
   *
   * <pre>{@code
   * .tag(IdempotentOperation.class, IdempotentOperation.forReference("create-order", cartId))
   * }</pre>
   *
   * @param name the operation name, such as {@code create-order}
   * @param reference the business reference, 1 to 200 characters, no personal data
   * @return the operation; its {@link #key()} is known only once the executor has begun it (read it
   *     from {@link IdempotencyResult} or the exception)
   * @throws IllegalArgumentException if the name is blank or longer than 200 characters
   */
  public static IdempotentOperation forReference(String name, String reference) {
    return new IdempotentOperation(new OperationId(OperationId.DEFAULT_SCOPE, name, PLACEHOLDER),
        Objects.requireNonNull(reference, "reference"), null, false, true);
  }

  /** Stands in for a key still to be derived, so that the name is validated at once. */
  private static final IdempotencyKey PLACEHOLDER = IdempotencyKey.of("not-yet-derived");

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
        null, null, false, false);
  }

  /**
   * A copy in another scope (caller or tenant), with the same key.
   *
   * @param scope the scope, 1 to 200 characters
   * @return a copy in another scope (caller or tenant), with the same key
   */
  public IdempotentOperation withScope(String scope) {
    return new IdempotentOperation(new OperationId(scope, id.operation(), id.key()), reference, policy, keyChosen,
        keyFromReference);
  }

  /**
   * A copy with a key the app stored or derived; on an operation made by {@link #forReference},
   * this key replaces the derived one.
   *
   * @param key the key
   * @return a copy with a key the app stored or derived
   */
  public IdempotentOperation withKey(IdempotencyKey key) {
    return new IdempotentOperation(new OperationId(id.scope(), id.operation(), key), reference, policy, true, false);
  }

  /**
   * A copy with the app's own reference (1 to 200 characters, no personal data), to find the
   * operation in the journal later ({@code executor.findByReference}).
   *
   * <p>This does NOT deduplicate: the key stays the one this operation already has, so two
   * operations made with {@code of(name).withReference("cart-42")} have two keys, and the server
   * runs both. For one key per reference, use {@link #forReference}.
   *
   * @param reference the reference
   * @return a copy with this reference; on an operation made by {@link #forReference}, the key is
   *     then derived from this reference
   */
  public IdempotentOperation withReference(String reference) {
    return new IdempotentOperation(id, Objects.requireNonNull(reference, "reference"), policy, keyChosen,
        keyFromReference);
  }

  /**
   * A copy with a retry policy for this operation only, instead of the executor's.
   *
   * @param policy the policy
   * @return a copy with a retry policy for this operation only, instead of the executor's
   */
  public IdempotentOperation withPolicy(RetryPolicy policy) {
    return new IdempotentOperation(id, reference, Objects.requireNonNull(policy, "policy"), keyChosen,
        keyFromReference);
  }

  /**
   * The identity: scope, name and key.
   *
   * @return the identity: scope, name and key
   * @throws IllegalStateException on an operation made by {@link #forReference}: its key is
   *     derived by the executor (see {@link IdempotencyResult#operationId()})
   */
  public OperationId id() {
    checkKeyKnown();
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
   * @throws IllegalStateException on an operation made by {@link #forReference}; see {@link #id()}
   */
  public IdempotencyKey key() {
    checkKeyKnown();
    return id.key();
  }

  /**
   * The operation name.
   *
   * @return the name, such as {@code create-order}
   */
  public String name() {
    return id.operation();
  }

  /**
   * Whether the executor derives the key from the reference.
   *
   * @return true for an operation made by {@link #forReference} (and not given a key since)
   */
  public boolean keyFromReference() {
    return keyFromReference;
  }

  private void checkKeyKnown() {
    if (keyFromReference) {
      throw new IllegalStateException("the key of operation '" + id.operation() + "' is derived from its reference"
          + " by the executor; read it from the IdempotencyResult or the exception");
    }
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
    Operation.Builder b = keyFromReference
        ? Operation.forReference(id.operation(), reference, request).scope(id.scope())
        : Operation.builder(id.operation(), request).scope(id.scope()).key(id.key());
    if (reference != null && !keyFromReference) {
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
    String identity = keyFromReference ? id.scope() + "/" + id.operation() + "/<derived from reference>" : id.toString();
    return "IdempotentOperation{" + identity + (reference != null ? ", reference=" + reference : "") + "}";
  }
}
