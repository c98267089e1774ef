package dev.idem.testkit;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * What an {@link EffectHandler} is asked to do: one execution of the business action.
 *
 * <p>Immutable and thread-safe; the body is copied in and out.
 *
 * @param effectNumber the server-wide number of this effect, starting at 1; handlers can use it to
 *     mint ids that differ from one effect to the next, which is what makes a double effect visible
 * @param caller the caller scope, {@code "anonymous"} when the request named none
 * @param method the HTTP method, upper case
 * @param path the encoded request path, without the query
 * @param key the unquoted idempotency key, or null for a request that carried none (allowed only
 *     for methods that do not require one)
 * @param body the request body; empty when there was none
 * @param operationId the stable id of the operation ({@code dev.idem.server.Claim#operationId()}), the
 *     same for every request with its key: what a 202's operation resource is named by; null for a
 *     request without a key
 */
public record EffectRequest(long effectNumber, String caller, String method, String path, String key, byte[] body,
    String operationId) {
  /**
   * Makes the record.
   *
   * @param effectNumber the server-wide number of this effect, starting at 1; handlers can use it to mint ids that differ from one effect to the next, which is what makes a double effect visible
   * @param caller the caller scope, {@code "anonymous"} when the request named none
   * @param method the HTTP method, upper case
   * @param path the encoded request path, without the query
   * @param key the unquoted idempotency key, or null for a request that carried none (allowed only for methods that do not require one)
   * @param body the request body; empty when there was none
   * @param operationId the stable id of the operation, or null for a request without a key
   * @throws NullPointerException if any component other than {@code key} and {@code operationId} is null
   */
  public EffectRequest {
    Objects.requireNonNull(caller, "caller");
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(path, "path");
    body = Objects.requireNonNull(body, "body").clone();
  }

  /**
   * A request without an operation id.
   *
   * @param effectNumber the server-wide number of this effect, starting at 1
   * @param caller the caller scope, {@code "anonymous"} when the request named none
   * @param method the HTTP method, upper case
   * @param path the encoded request path, without the query
   * @param key the unquoted idempotency key, or null
   * @param body the request body; empty when there was none
   * @throws NullPointerException if any argument other than {@code key} is null
   */
  public EffectRequest(long effectNumber, String caller, String method, String path, String key, byte[] body) {
    this(effectNumber, caller, method, path, key, body, null);
  }

  /**
   * A copy of the request body.
   *
   * @return a copy of the request body
   */
  @Override
  public byte[] body() {
    return body.clone();
  }

  /**
   * The request body decoded as UTF-8.
   *
   * @return the request body decoded as UTF-8
   */
  public String bodyUtf8() {
    return new String(body, StandardCharsets.UTF_8);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof EffectRequest r && effectNumber == r.effectNumber && caller.equals(r.caller)
        && method.equals(r.method) && path.equals(r.path) && Objects.equals(key, r.key)
        && Arrays.equals(body, r.body) && Objects.equals(operationId, r.operationId);
  }

  @Override
  public int hashCode() {
    return 31 * Objects.hash(effectNumber, caller, method, path, key, operationId) + Arrays.hashCode(body);
  }

  /** Leaves the body out: it may hold data a test log should not. */
  @Override
  public String toString() {
    return "EffectRequest{#" + effectNumber + " " + method + " " + path + " caller=" + caller
        + " key=" + key + ", " + body.length + " body bytes}";
  }
}
