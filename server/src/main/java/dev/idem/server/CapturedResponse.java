package dev.idem.server;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A handler's response as an adapter captured it, for {@link IdempotencyGuard#complete}.
 *
 * @param status the HTTP status the handler set
 * @param headers every response header the handler set; the guard keeps only the allowlisted ones
 * @param body the body, or null when it was longer than {@link IdempotencyGuard#maxCapturedBody()}
 *     and the adapter stopped capturing it (it still went to the client)
 */
public record CapturedResponse(int status, Map<String, List<String>> headers, byte[] body) {
  /**
   * Makes the record.
   *
   * @param status the HTTP status the handler set
   * @param headers every response header the handler set; the guard keeps only the allowlisted ones
   * @param body the body, or null when it was longer than {@link IdempotencyGuard#maxCapturedBody()} and the adapter stopped capturing it (it still went to the client)
   * @throws NullPointerException if headers is null
   */
  public CapturedResponse {
    Objects.requireNonNull(headers, "headers");
  }

  /** {@return true when the body was over the cap and was not captured} */
  public boolean overCap() {
    return body == null;
  }

  /**
   * Status, header names and body size, as {@link GuardResponse}'s: never a header value, which may
   * be a {@code Set-Cookie} session or a token the handler answers with, nor the body.
   */
  @Override
  public String toString() {
    return "CapturedResponse{" + status + ", headers=" + headers.keySet() + ", "
        + (body == null ? "body over the cap" : body.length + " body bytes") + "}";
  }

  /**
   * A JSON response, as a handler returns one in transactional mode.
   *
   * @param status the HTTP status
   * @param json the body
   * @return the response, with {@code Content-Type: application/json}
   */
  public static CapturedResponse json(int status, String json) {
    Objects.requireNonNull(json, "json");
    return new CapturedResponse(status, Map.of("Content-Type", List.of("application/json")),
        json.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * This response with one more header value, such as {@code Location} for a created resource or
   * an operation resource of a 202.
   *
   * @param name the header name
   * @param value the value
   * @return a copy with the header
   */
  public CapturedResponse withHeader(String name, String value) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
    Map<String, List<String>> h = new LinkedHashMap<>(headers);
    List<String> values = new ArrayList<>(h.getOrDefault(name, List.of()));
    values.add(value);
    h.put(name, List.copyOf(values));
    return new CapturedResponse(status, h, body);
  }
}
