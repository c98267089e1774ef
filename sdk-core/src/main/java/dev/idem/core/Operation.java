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
 * operation and reuse it for every call, or supply a key you stored. Immutable and thread-safe.
 */
public final class Operation {
  private final OperationId id;
  private final String reference;
  private final RequestSnapshot request;
  private final RetryPolicy policy;

  private Operation(Builder b) {
    this.id = new OperationId(b.scope, b.name, b.key != null ? b.key : IdempotencyKey.generate());
    this.reference = b.reference;
    this.request = b.request;
    this.policy = b.policy;
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
   * The identity, with the key.
   *
   * @return the scope, name and key
   */
  public OperationId id() {
    return id;
  }

  /**
   * The key, for convenience.
   *
   * @return the idempotency key sent on every attempt
   */
  public IdempotencyKey key() {
    return id.key();
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
    return "Operation{" + id + ", " + request + "}";
  }

  /** Builds an {@link Operation}. Not thread-safe. */
  public static final class Builder {
    private final String name;
    private final RequestSnapshot request;
    private String scope = OperationId.DEFAULT_SCOPE;
    private IdempotencyKey key;
    private String reference;
    private RetryPolicy policy;

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
     * The app's own reference (1 to 200 characters, no personal data), to find the operation later.
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
     * @throws IllegalArgumentException if the name or scope is blank or too long
     */
    public Operation build() {
      return new Operation(this);
    }
  }
}
