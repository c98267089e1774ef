package dev.idem.testkit;

import dev.idem.testkit.internal.HeaderFields;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A response the server stores and replays: status, content type, body, and any headers added with
 * {@link #withHeader} (such as {@code Location}). An {@link EffectHandler} returns one; the server
 * keeps it as the result of the operation and sends it again, unchanged apart from an
 * {@code Idempotent-Replayed: true} header, to every repeat of the request. Of the added headers,
 * those the guard replays ({@code Location}, {@code ETag}, ...) are stored; others go to the first
 * caller only.
 *
 * <p>Immutable and thread-safe; the body is copied in and out.
 */
public final class Reply {
  private final int status;
  private final String contentType;
  private final byte[] body;
  private final Map<String, List<String>> headers;

  private Reply(int status, String contentType, byte[] body, Map<String, List<String>> headers) {
    if (status < 200 || status > 599) {
      throw new IllegalArgumentException("a final response status is 200..599, not " + status);
    }
    if (contentType != null) {
      HeaderFields.requireSendable("Content-Type", contentType);
    }
    this.status = status;
    this.contentType = contentType;
    this.body = body.clone();
    this.headers = Collections.unmodifiableMap(headers);
  }

  /**
   * A reply with a JSON body, as {@code application/json; charset=utf-8}.
   *
   * @return the reply
   * @param status 200..599
   * @param json the body; not checked for validity, so handlers can test clients with broken JSON
   * @throws IllegalArgumentException if {@code status} is out of range
   */
  public static Reply json(int status, String json) {
    Objects.requireNonNull(json, "json");
    return new Reply(status, "application/json; charset=utf-8", json.getBytes(StandardCharsets.UTF_8), Map.of());
  }

  /**
   * A reply with any body.
   *
   * @return the reply
   * @param status 200..599
   * @param contentType the media type, or null to send no {@code Content-Type}; printable ASCII
   * @param body the body bytes, copied; empty for no body
   * @throws IllegalArgumentException if {@code status} is out of range, or {@code contentType} could
   *     not be sent as a header value (a line break or another control character, non-ASCII)
   */
  public static Reply of(int status, String contentType, byte[] body) {
    return new Reply(status, contentType, Objects.requireNonNull(body, "body"), Map.of());
  }

  /**
   * This reply with one more header value, such as the {@code Location} of a created resource or of
   * the operation resource of a 202.
   *
   * <p>The field is checked here, as {@link Fault#withHeader} checks its own: one the server could
   * not write would otherwise surface only after the effect ran and its result was stored, as a
   * read timeout in the client under test.
   *
   * @param name the header name (an HTTP token); not {@code Content-Type}, which {@link #of} sets
   * @param value the value, tab or printable ASCII
   * @return a copy with the header
   * @throws IllegalArgumentException naming the header, if the name is {@code Content-Type} or the
   *     field could not be sent (an empty or non-token name, a line break or another control
   *     character or non-ASCII in the value)
   */
  public Reply withHeader(String name, String value) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
    if (name.equalsIgnoreCase("Content-Type")) {
      throw new IllegalArgumentException("set Content-Type through Reply.of");
    }
    HeaderFields.requireSendable(name, value);
    Map<String, List<String>> h = new LinkedHashMap<>(headers);
    List<String> values = new ArrayList<>(h.getOrDefault(name, List.of()));
    values.add(value);
    h.put(name, List.copyOf(values));
    return new Reply(status, contentType, body, h);
  }

  /**
   * The headers added with {@link #withHeader}, in order; unmodifiable.
   *
   * @return header names to values
   */
  public Map<String, List<String>> headers() {
    return headers;
  }

  /**
   * The HTTP status.
   *
   * @return the HTTP status
   */
  public int status() {
    return status;
  }

  /**
   * The media type of the body, if any.
   *
   * @return the media type of the body, if any
   */
  public Optional<String> contentType() {
    return Optional.ofNullable(contentType);
  }

  /**
   * A copy of the body.
   *
   * @return a copy of the body
   */
  public byte[] body() {
    return body.clone();
  }

  /**
   * The body decoded as UTF-8.
   *
   * @return the body decoded as UTF-8
   */
  public String bodyUtf8() {
    return new String(body, StandardCharsets.UTF_8);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Reply r && status == r.status && Objects.equals(contentType, r.contentType)
        && Arrays.equals(body, r.body) && headers.equals(r.headers);
  }

  @Override
  public int hashCode() {
    return 31 * Objects.hash(status, contentType, headers) + Arrays.hashCode(body);
  }

  @Override
  public String toString() {
    return "Reply{" + status + ", " + body.length + " body bytes}";
  }
}
