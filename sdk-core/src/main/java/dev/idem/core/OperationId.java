package dev.idem.core;

import java.util.Objects;

/**
 * The identity of one logical operation: who calls ({@code scope}, a caller or tenant), what it
 * does ({@code operation}, such as {@code create-order}) and its {@link IdempotencyKey}. The same
 * random key in two scopes, or for two operations, names two different operations.
 *
 * @param scope the caller or tenant; 1 to 200 characters
 * @param operation the operation name; 1 to 200 characters
 * @param key the idempotency key
 */
public record OperationId(String scope, String operation, IdempotencyKey key) {
  /** The scope used when the app names none. */
  public static final String DEFAULT_SCOPE = "default";

  private static final int MAX_NAME = 200;

  /**
   * Validates the components.
   *
   * @param scope the caller or tenant; 1 to 200 characters
   * @param operation the operation name; 1 to 200 characters
   * @param key the idempotency key
   * @throws IllegalArgumentException if scope or operation is blank or longer than 200 characters
   * @throws NullPointerException if any component is null
   */
  public OperationId {
    checkName(scope, "scope");
    checkName(operation, "operation");
    Objects.requireNonNull(key, "key");
  }

  private static void checkName(String value, String what) {
    Objects.requireNonNull(value, what);
    if (value.isBlank() || value.length() > MAX_NAME) {
      throw new IllegalArgumentException(what + " must have 1 to " + MAX_NAME + " characters and not be blank");
    }
  }

  @Override
  public String toString() {
    return scope + "/" + operation + "/" + key.value();
  }
}
