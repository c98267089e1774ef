package dev.idem.core;

import dev.idem.core.spi.RequestSnapshot;
import java.util.Objects;
import java.util.Optional;

/**
 * One logical operation to execute: its name, scope, key, the app's optional reference, the
 * request, and optionally a retry policy of its own.
 *
 * <pre>{@code
 * Operation op = Operation.builder("create-order", snapshot)
 *     .scope("tenant-42")
 *     .reference("cart-1234")   // find it again after a restart
 *     .build();                  // a fresh random key, created once, here
 * }</pre>
 *
 * <p>The key is fixed when {@link Builder#build()} runs: build the operation once per logical
 * operation and reuse it for every call, or supply a key you stored.
 *
 * <p>One key per business reference, with nothing stored by the app:
 * <pre>{@code
 * Operation op = Operation.forReference("create-order", "cart-1234", snapshot).build();
 * }</pre>
 * Its key is derived by the executor when it begins the operation (HMAC-SHA256 with the secret
 * given to {@link IdempotentExecutor.Builder#referenceKeySecret}), so every submission of the same
 * reference, in this process or after a restart, gets the same key and the server runs it once.
 * By contrast {@link Builder#reference} only labels the operation for lookups: it does not
 * deduplicate.
 *
 * <p>Immutable and thread-safe.
 */
public final class Operation {
  /** Stands in for a key derived later, so that scope and name are validated when built. */
  private static final IdempotencyKey NOT_YET_DERIVED = IdempotencyKey.of("not-yet-derived");

  private final OperationId id;
  private final String reference;
  private final RequestSnapshot request;
  private final RetryPolicy policy;
  /** True while the key is still to be derived from the reference by an executor. */
  private final boolean keyFromReference;

  private Operation(OperationId id, String reference, RequestSnapshot request, RetryPolicy policy,
      boolean keyFromReference) {
    this.id = id;
    this.reference = reference;
    this.request = request;
    this.policy = policy;
    this.keyFromReference = keyFromReference;
  }

  /**
   * Starts an operation.
   *
   * @param name the operation name, such as {@code create-order}; handlers for resumed operations
   *     are registered by this name
   * @param request the request to send, secrets included (they are kept out of the journal)
   * @return a new builder with the default scope, a key generated at build time, no reference and
   *     no policy of its own
   * @throws NullPointerException if {@code name} or {@code request} is null
   */
  public static Builder builder(String name, RequestSnapshot request) {
    return new Builder(name, request);
  }

  /**
   * Starts an operation whose key is derived from a business reference, so that every submission
   * of the same reference (same scope and name) gets the same key, even after a restart with an
   * empty journal: the executor that begins it computes HMAC-SHA256 over the scope, the name and
   * the reference (each length-prefixed, see {@link IdempotencyKey#derive}) with its
   * {@link IdempotentExecutor.Builder#referenceKeySecret secret}. The reference is also recorded,
   * as with {@link Builder#reference}, for lookups.
   *
   * @param name the operation name, such as {@code create-order}
   * @param reference the business reference, such as a cart or invoice number: 1 to 200
   *     characters, no personal data (it is journaled; the key only carries its HMAC)
   * @param request the request to send, secrets included (they are kept out of the journal)
   * @return a new builder with the default scope and no policy of its own; calling
   *     {@link Builder#key} on it makes {@link Builder#build()} throw
   * @throws NullPointerException if any argument is null
   */
  public static Builder forReference(String name, String reference, RequestSnapshot request) {
    Builder b = new Builder(name, request).reference(reference);
    b.keyFromReference = true;
    return b;
  }

  /**
   * The identity, with the key.
   *
   * @return the scope, name and key
   * @throws IllegalStateException if the key is to be derived from the reference (see
   *     {@link #forReference}): it exists only once an executor begins the operation, and the
   *     outcome or exception then carries it
   */
  public OperationId id() {
    checkKeyKnown();
    return id;
  }

  /**
   * The key, for convenience.
   *
   * @return the idempotency key sent on every attempt
   * @throws IllegalStateException if the key is to be derived from the reference; see {@link #id()}
   */
  public IdempotencyKey key() {
    checkKeyKnown();
    return id.key();
  }

  /**
   * The scope, known even before a derived key is.
   *
   * @return the caller or tenant
   */
  public String scope() {
    return id.scope();
  }

  /**
   * The operation name, known even before a derived key is.
   *
   * @return the name, such as {@code create-order}
   */
  public String name() {
    return id.operation();
  }

  /**
   * Whether the key is still to be derived from the reference by the executor that begins it.
   *
   * @return true for an operation made with {@link #forReference} whose key is not derived yet
   */
  public boolean keyFromReference() {
    return keyFromReference;
  }

  /**
   * This operation with the key derived from its reference; the executor calls it at begin.
   *
   * @param secret the executor's reference key secret, at least 16 bytes
   * @return the same operation with its derived key, or this operation if its key is its own
   * @throws IllegalArgumentException if the secret is shorter than 16 bytes
   */
  Operation withDerivedKey(byte[] secret) {
    if (!keyFromReference) {
      return this;
    }
    IdempotencyKey derived = IdempotencyKey.derive(secret, id.scope(), id.operation(), reference);
    return new Operation(new OperationId(id.scope(), id.operation(), derived), reference, request, policy, false);
  }

  private void checkKeyKnown() {
    if (keyFromReference) {
      throw new IllegalStateException("the key of operation '" + id.operation() + "' is derived from its reference"
          + " by the executor that begins it; read it from the outcome, the exception or the journal");
    }
  }

  /**
   * The app's reference, if any.
   *
   * @return the reference, or empty if none was set
   */
  public Optional<String> reference() {
    return Optional.ofNullable(reference);
  }

  /**
   * The request, secrets included.
   *
   * @return the request as given to the builder
   */
  public RequestSnapshot request() {
    return request;
  }

  /**
   * A policy for this operation only; empty to use the executor's.
   *
   * @return the operation's own policy, or empty
   */
  public Optional<RetryPolicy> policy() {
    return Optional.ofNullable(policy);
  }

  @Override
  public String toString() {
    return "Operation{" + (keyFromReference ? id.scope() + "/" + id.operation() + "/<derived from reference>" : id)
        + ", " + request + "}";
  }

  /** Builds an {@link Operation}. Not thread-safe. */
  public static final class Builder {
    private final String name;
    private final RequestSnapshot request;
    private String scope = OperationId.DEFAULT_SCOPE;
    private IdempotencyKey key;
    private String reference;
    private RetryPolicy policy;
    private boolean keyFromReference;

    private Builder(String name, RequestSnapshot request) {
      this.name = Objects.requireNonNull(name, "name");
      this.request = Objects.requireNonNull(request, "request");
    }

    /**
     * The caller or tenant; default {@value OperationId#DEFAULT_SCOPE}.
     *
     * @param scope the scope, 1 to 200 characters, not blank (checked by {@link #build()})
     * @return this builder
     */
    public Builder scope(String scope) {
      this.scope = Objects.requireNonNull(scope, "scope");
      return this;
    }

    /**
     * A key the app already has (stored, or derived); default a fresh random key.
     *
     * @param key the key to send on every attempt
     * @return this builder
     */
    public Builder key(IdempotencyKey key) {
      this.key = Objects.requireNonNull(key, "key");
      return this;
    }

    /**
     * The app's own reference (1 to 200 characters, no personal data), to find the operation later
     * ({@link IdempotentExecutor#findByReference}). This is a label for lookups and does NOT
     * deduplicate: two operations built with the same reference have two keys, and the server runs
     * both. For one key per reference, use {@link Operation#forReference}.
     *
     * @param reference the reference; its length is checked when the operation is journaled
     * @return this builder
     */
    public Builder reference(String reference) {
      this.reference = Objects.requireNonNull(reference, "reference");
      return this;
    }

    /**
     * A retry policy for this operation only.
     *
     * @param policy the policy, used instead of the executor's default; default none
     * @return this builder
     */
    public Builder policy(RetryPolicy policy) {
      this.policy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * Fixes the identity, generating the key if none was given.
     *
     * @return the operation, immutable; the key it holds does not change however often it is run
     * @throws IllegalArgumentException if the name or scope is blank or too long, or if a builder
     *     made by {@link Operation#forReference} was also given a key
     */
    public Operation build() {
      if (keyFromReference && key != null) {
        throw new IllegalArgumentException("operation '" + name + "' has both a key of its own and a key derived"
            + " from its reference; choose one");
      }
      OperationId id = new OperationId(scope, name,
          key != null ? key : keyFromReference ? NOT_YET_DERIVED : IdempotencyKey.generate());
      return new Operation(id, reference, request, policy, keyFromReference);
    }
  }
}
