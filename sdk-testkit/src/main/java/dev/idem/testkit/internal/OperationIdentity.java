package dev.idem.testkit.internal;

import java.util.Objects;

/**
 * The identity of one logical operation on the server: who asked (caller), what for (method and
 * path) and which key. Two callers that happen to pick the same key must never see each other's
 * results, so the caller is part of the identity, not just the key.
 *
 * @param caller the caller scope, {@code "anonymous"} when the request named none
 * @param method the HTTP method, upper case
 * @param path the encoded request path, without the query
 * @param key the idempotency key, unquoted
 */
public record OperationIdentity(String caller, String method, String path, String key) {
  /** @throws NullPointerException if any component is null */
  public OperationIdentity {
    Objects.requireNonNull(caller, "caller");
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(key, "key");
  }
}
