package dev.idem.server;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A response the guard answers itself: a replay, or a refusal (400, 409, 413, 422...). Adapters
 * write it as is: status, headers, body.
 *
 * <p>Immutable and thread-safe; the body is copied in and out.
 */
public final class GuardResponse {
  private final int status;
  private final Map<String, List<String>> headers;
  private final byte[] body;

  /**
   * Creates the response the guard tells an adapter to send.
   *
   * @param status the HTTP status
   * @param headers header names to values, in order; copied
   * @param body the body; copied
   */
  public GuardResponse(int status, Map<String, List<String>> headers, byte[] body) {
    Objects.requireNonNull(headers, "headers");
    Map<String, List<String>> copy = new LinkedHashMap<>();
    headers.forEach((k, v) -> copy.put(k, List.copyOf(v)));
    this.status = status;
    this.headers = Collections.unmodifiableMap(copy);
    this.body = Objects.requireNonNull(body, "body").clone();
  }

  /** {@return the HTTP status} */
  public int status() {
    return status;
  }

  /** {@return the headers to send, in order; unmodifiable} */
  public Map<String, List<String>> headers() {
    return headers;
  }

  /**
   * The first value of a header, matched case-insensitively.
   *
   * @param name the header name
   * @return the value, or null if absent
   */
  public String header(String name) {
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      if (e.getKey().equalsIgnoreCase(name) && !e.getValue().isEmpty()) {
        return e.getValue().get(0);
      }
    }
    return null;
  }

  /** {@return a copy of the body} */
  public byte[] body() {
    return body.clone();
  }

  /** {@return the body decoded as UTF-8} */
  public String bodyUtf8() {
    return new String(body, StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return "GuardResponse{" + status + ", headers=" + headers.keySet() + ", " + body.length + " body bytes}";
  }
}
