package dev.idem.testkit;

import java.util.Objects;
import java.util.Optional;

/**
 * One request as the server received it, before any fault or idempotency processing.
 *
 * <p>Immutable and thread-safe.
 *
 * @param sequence the order of arrival at the server, starting at 1
 * @param method the HTTP method, upper case
 * @param path the encoded request path, without the query
 * @param caller the caller scope, {@code "anonymous"} when the request named none
 * @param keyHeader the raw value of the key header exactly as sent (quotes included), if present
 * @param body the request body decoded as UTF-8; empty when there was none
 */
public record ReceivedRequest(
    int sequence, String method, String path, String caller, Optional<String> keyHeader, String body) {
  /** @throws NullPointerException if any component is null */
  public ReceivedRequest {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(caller, "caller");
    Objects.requireNonNull(keyHeader, "keyHeader");
    Objects.requireNonNull(body, "body");
  }
}
