package dev.idem.testkit;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One request as the server received it, before any fault or idempotency processing.
 *
 * <p>Immutable and thread-safe. {@link #toString()} leaves out header values and the body, which
 * may hold credentials a test log should not.
 *
 * @param sequence the order of arrival at the server, starting at 1
 * @param method the HTTP method, upper case
 * @param path the encoded request path, without the query
 * @param caller the caller scope, {@code "anonymous"} when the request named none
 * @param keyHeader the raw value of the key header exactly as sent (quotes included), if present
 * @param body the request body decoded as UTF-8; empty when there was none; when it was larger
 *     than {@link IdempotentServer.Builder#maxBodySize} (and answered 413), only its first
 *     characters, at most that many bytes and never a character cut in two: a prefix of the text
 *     sent
 * @param headers every request header as received: names in lower case, in the order they first
 *     appeared, each with its values in the order sent; unmodifiable. It includes what the client
 *     added on its own ({@code Host}, {@code Content-Length}, {@code User-Agent} and the like).
 */
public record ReceivedRequest(
    int sequence, String method, String path, String caller, Optional<String> keyHeader, String body,
    Map<String, List<String>> headers) {
  /**
   * Makes the record; the header names are lower-cased.
   *
   * @param sequence the order of arrival at the server, starting at 1
   * @param method the HTTP method, upper case
   * @param path the encoded request path, without the query
   * @param caller the caller scope, {@code "anonymous"} when the request named none
   * @param keyHeader the raw value of the key header exactly as sent (quotes included), if present
   * @param body the request body decoded as UTF-8; empty when there was none; when it was larger
   *     than {@link IdempotentServer.Builder#maxBodySize} (and answered 413), only its first
   *     characters, at most that many bytes and never a character cut in two: a prefix of the text
   *     sent
   * @param headers every request header as received: names in lower case, in the order they first appeared, each with its values in the order sent; unmodifiable. It includes what the client added on its own ({@code Host}, {@code Content-Length}, {@code User-Agent} and the like).
   * @throws NullPointerException if any component is null
   * @throws IllegalArgumentException if a header has no values
   */
  public ReceivedRequest {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(caller, "caller");
    Objects.requireNonNull(keyHeader, "keyHeader");
    Objects.requireNonNull(body, "body");
    headers = lowerCased(Objects.requireNonNull(headers, "headers"));
  }

  /**
   * The first value of a header, as {@link #headers()} holds it.
   *
   * @param name the header name, matched case-insensitively
   * @return the first value, or empty if the request did not carry the header
   */
  public Optional<String> header(String name) {
    return headerValues(name).stream().findFirst();
  }

  /**
   * Every value of a header, in the order sent.
   *
   * @param name the header name, matched case-insensitively
   * @return the values; empty if the request did not carry the header
   */
  public List<String> headerValues(String name) {
    return headers.getOrDefault(Objects.requireNonNull(name, "name").toLowerCase(Locale.ROOT), List.of());
  }

  @Override
  public String toString() {
    return "ReceivedRequest{#" + sequence + " " + method + " " + path + " caller=" + caller
        + " key=" + keyHeader.orElse(null) + " headers=" + headers.keySet() + ", "
        + body.length() + " body chars}";
  }

  // Names folded to lower case (HTTP names are case-insensitive), values of equal names merged.
  private static Map<String, List<String>> lowerCased(Map<String, List<String>> headers) {
    Map<String, List<String>> merged = new LinkedHashMap<>();
    headers.forEach((name, values) -> {
      Objects.requireNonNull(name, "header name");
      Objects.requireNonNull(values, "header values");
      if (values.isEmpty()) {
        throw new IllegalArgumentException("header " + name + " has no values");
      }
      values.forEach(v -> Objects.requireNonNull(v, "header value"));
      merged.computeIfAbsent(name.toLowerCase(Locale.ROOT), n -> new ArrayList<>()).addAll(values);
    });
    merged.replaceAll((name, values) -> List.copyOf(values));
    return Collections.unmodifiableMap(merged);
  }
}
