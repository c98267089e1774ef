package dev.idem.server.spi;

import dev.idem.server.IdempotencyGuard;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The result of an operation as the store keeps it: status, the allowlisted headers and the body.
 *
 * <p>A body longer than the guard's capture cap is not kept: {@link #bodyOmitted()} is then true
 * and {@link #body()} empty. The operation still counts as done, so a replay never runs the
 * handler again; see {@link IdempotencyGuard} for what such a replay sends.
 *
 * <p>Immutable and thread-safe; the body is copied in and out.
 */
public final class StoredResponse {
  private final int status;
  private final Map<String, List<String>> headers;
  private final byte[] body;
  private final boolean bodyOmitted;

  /**
   * Creates the response a store keeps for replay.
   *
   * @param status the HTTP status, 100..599
   * @param headers header names (as the handler spelled them) to values; copied
   * @param body the body, copied; must be empty when {@code bodyOmitted}
   * @param bodyOmitted true when the body was over the capture cap and was not kept
   * @throws IllegalArgumentException if the status is out of range or an omitted body is not empty
   */
  public StoredResponse(int status, Map<String, List<String>> headers, byte[] body, boolean bodyOmitted) {
    if (status < 100 || status > 599) {
      throw new IllegalArgumentException("an HTTP status is 100..599, not " + status);
    }
    Objects.requireNonNull(headers, "headers");
    Objects.requireNonNull(body, "body");
    if (bodyOmitted && body.length > 0) {
      throw new IllegalArgumentException("an omitted body must be empty");
    }
    Map<String, List<String>> copy = new LinkedHashMap<>();
    headers.forEach((k, v) -> copy.put(Objects.requireNonNull(k, "header name"), List.copyOf(v)));
    this.status = status;
    this.headers = Collections.unmodifiableMap(copy);
    this.body = body.clone();
    this.bodyOmitted = bodyOmitted;
  }

  /** {@return the HTTP status} */
  public int status() {
    return status;
  }

  /** {@return the stored headers, in the order stored; unmodifiable} */
  public Map<String, List<String>> headers() {
    return headers;
  }

  /** {@return a copy of the body; empty when none was sent or it was omitted} */
  public byte[] body() {
    return body.clone();
  }

  /** {@return the body's length in bytes, without copying it; 0 when none was sent or it was omitted} */
  public int bodyLength() {
    return body.length;
  }

  /** {@return true when the body was over the capture cap and was not stored} */
  public boolean bodyOmitted() {
    return bodyOmitted;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StoredResponse r && status == r.status && bodyOmitted == r.bodyOmitted
        && headers.equals(r.headers) && Arrays.equals(body, r.body);
  }

  @Override
  public int hashCode() {
    return Objects.hash(status, headers, bodyOmitted) * 31 + Arrays.hashCode(body);
  }

  /** Status and sizes only: the body may hold personal data. */
  @Override
  public String toString() {
    return "StoredResponse{" + status + ", headers=" + headers.keySet() + ", "
        + (bodyOmitted ? "body omitted" : body.length + " body bytes") + "}";
  }
}
