package dev.idem.core.spi;

import dev.idem.core.internal.HeaderMaps;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A buffered HTTP response as the executor sees it: status, headers by lower-case name, and body.
 * The journal stores one as the outcome of a finished operation, so that a result can reach the
 * app even when the process died after the response arrived.
 *
 * <p>Immutable and thread-safe; byte arrays are copied in and out.
 */
public final class ResponseSnapshot {
  /**
   * The most body bytes an HTTP adapter keeps in a snapshot of a live response: 64 KiB, the
   * embedded journal's default stored-body cap. A longer body (or one whose length is unknown and
   * that the outcome does not depend on) streams to the caller and is not kept.
   */
  public static final int MAX_CAPTURED_BODY = 64 * 1024;
  /**
   * Set by the HTTP adapters on a snapshot whose body streamed to the caller instead of being kept:
   * the snapshot's body is empty and the value is the declared length in bytes, or {@code unknown}.
   */
  public static final String BODY_NOT_KEPT_HEADER = "idem-body-not-kept";

  private final int status;
  private final Map<String, List<String>> headers;
  private final byte[] body;

  /**
   * Captures a response: its status, its headers and a copy of its body.
   *
   * @param status the HTTP status code, 100 to 599
   * @param headers header values by name (names are lower-cased here)
   * @param body the body bytes, copied
   * @throws IllegalArgumentException for a status outside 100 to 599
   */
  public ResponseSnapshot(int status, Map<String, List<String>> headers, byte[] body) {
    if (status < 100 || status > 599) {
      throw new IllegalArgumentException("HTTP status out of range: " + status);
    }
    this.status = status;
    this.headers = HeaderMaps.normalize(Objects.requireNonNull(headers, "headers"));
    this.body = Objects.requireNonNull(body, "body").clone();
  }

  /**
   * The HTTP status code.
   *
   * @return the status, 100 to 599
   */
  public int status() {
    return status;
  }

  /**
   * Headers by lower-case name; unmodifiable.
   *
   * @return the headers; every name maps to its values
   */
  public Map<String, List<String>> headers() {
    return headers;
  }

  /**
   * The first value of a header, by case-insensitive name.
   *
   * @param name the header name, any case
   * @return the first value, or empty if the header is absent
   */
  public Optional<String> header(String name) {
    return HeaderMaps.first(headers, name);
  }

  /**
   * A copy of the body.
   *
   * @return a new array on every call; changing it does not change the snapshot
   */
  public byte[] body() {
    return body.clone();
  }

  /** The body array itself, for {@link dev.idem.core.internal.SnapshotAccess}: never written to. */
  byte[] sharedBody() {
    return body;
  }

  /**
   * The body length in bytes, without copying it.
   *
   * @return the number of body bytes, 0 for no body
   */
  public int bodyLength() {
    return body.length;
  }

  /**
   * True for a 2xx status.
   *
   * @return whether the status is from 200 to 299
   */
  public boolean isSuccessful() {
    return status >= 200 && status < 300;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ResponseSnapshot r && status == r.status && headers.equals(r.headers)
        && Arrays.equals(body, r.body);
  }

  @Override
  public int hashCode() {
    return Objects.hash(status, headers, Arrays.hashCode(body));
  }

  /** Status and body size only: never the body or header values. */
  @Override
  public String toString() {
    return "HTTP " + status + " (" + body.length + " body bytes)";
  }
}
