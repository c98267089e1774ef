package dev.idem.server;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.server.internal.SecretPathParameters;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * What the guard needs to know about one request, as an adapter reads it from its framework.
 *
 * <p>The body is read lazily, through {@link BodyReader}, and only when the request carries a
 * valid key: a request the guard lets through untouched keeps its body stream for the handler.
 *
 * <p>The path is kept without its credential path parameters: each {@code ;name} or
 * {@code ;name=value}, in any segment, whose name (percent-decoded, any case) sdk-core's
 * {@code RequestSnapshot.isSecretPathParameterByDefault} names (a servlet container's
 * {@code ;jsessionid=}, {@code ;sig=}, {@code ;key=}); the rest stays as given, raw. The guard
 * makes the record's route and the fingerprint from this path, so such a parameter is no part of a
 * request's identity (a retry whose session id changed is the same operation) and is never stored
 * or logged.
 *
 * <p>Immutable and thread-safe, if the body reader is.
 *
 * @param method the HTTP method; upper-cased
 * @param path the raw (encoded) path, without the query, such as {@code /orders}; kept without
 *     its credential path parameters (see above)
 * @param rawQuery the raw query without {@code ?}, or null
 * @param contentType the request's {@code Content-Type}, or null
 * @param keyHeaderValues every value of the key header, in order; empty when absent
 * @param caller who is asking (an account or tenant id, never a credential); null or blank means
 *     {@code "anonymous"}
 * @param body reads the body
 * @param callerTimeout how long the caller still waits for the answer, if it said so (see
 *     {@link IdempotencyGuard.Builder#requestTimeoutHeader}); null if unknown. It caps the guard's
 *     wait for a first request still in flight.
 */
public record GuardRequest(String method, String path, String rawQuery, String contentType,
    List<String> keyHeaderValues, String caller, BodyReader body, Duration callerTimeout) {
  /**
   * Makes the record.
   *
   * @param method the HTTP method; upper-cased
   * @param path the raw (encoded) path, without the query, such as {@code /orders}; its credential
   *     path parameters are removed
   * @param rawQuery the raw query without {@code ?}, or null
   * @param contentType the request's {@code Content-Type}, or null
   * @param keyHeaderValues every value of the key header, in order; empty when absent
   * @param caller who is asking (an account or tenant id, never a credential); null or blank means {@code "anonymous"}
   * @param body reads the body
   * @param callerTimeout how long the caller still waits for the answer, if it said so; null if unknown
   * @throws NullPointerException if method, path, keyHeaderValues or body is null
   * @throws IllegalArgumentException if callerTimeout is negative
   */
  public GuardRequest {
    method = Objects.requireNonNull(method, "method").toUpperCase(Locale.ROOT);
    // Here, not in one adapter: every adapter (servlet, JDK HttpServer, the app's own) builds
    // this record from a raw path, and the route, fingerprint, logs and route policies all read it.
    path = SecretPathParameters.removedFrom(Objects.requireNonNull(path, "path"));
    keyHeaderValues = List.copyOf(keyHeaderValues);
    caller = caller == null || caller.isBlank() ? "anonymous" : caller;
    Objects.requireNonNull(body, "body");
    if (callerTimeout != null && callerTimeout.isNegative()) {
      throw new IllegalArgumentException("callerTimeout must not be negative: " + callerTimeout);
    }
  }

  /**
   * A request whose caller did not say how long it waits.
   *
   * @param method the HTTP method; upper-cased
   * @param path the raw (encoded) path, without the query, such as {@code /orders}; its credential
   *     path parameters are removed
   * @param rawQuery the raw query without {@code ?}, or null
   * @param contentType the request's {@code Content-Type}, or null
   * @param keyHeaderValues every value of the key header, in order; empty when absent
   * @param caller who is asking (an account or tenant id, never a credential); null or blank means {@code "anonymous"}
   * @param body reads the body
   * @throws NullPointerException if method, path, keyHeaderValues or body is null
   */
  public GuardRequest(String method, String path, String rawQuery, String contentType, List<String> keyHeaderValues,
      String caller, BodyReader body) {
    this(method, path, rawQuery, contentType, keyHeaderValues, caller, body, null);
  }

  /**
   * Method, path, the query with the value of each credential it holds redacted
   * ({@code RequestSnapshot.redactedQuery}), content type, caller, how many key values and the
   * caller's timeout: never a raw query, which may carry {@code ?access_token=}.
   */
  @Override
  public String toString() {
    return "GuardRequest{" + method + " " + path + (rawQuery == null ? "" : "?" + RequestSnapshot.redactedQuery(rawQuery))
        + ", contentType=" + contentType + ", " + keyHeaderValues.size() + " key value(s), caller=" + caller
        + (callerTimeout == null ? "" : ", callerTimeout=" + callerTimeout) + "}";
  }

  /**
   * Reads a request body, at most {@code limit} bytes of it.
   */
  @FunctionalInterface
  public interface BodyReader {
    /**
     * Reads the body.
     *
     * @param limit the most bytes to read; a body longer than that may be returned cut at
     *     {@code limit}, which the guard takes as "too large"
     * @return the bytes read; empty for no body
     * @throws IOException if the body cannot be read
     */
    byte[] read(int limit) throws IOException;

    /**
     * A reader over bytes already in memory.
     *
     * @param bytes the whole body; not copied, so do not change it afterwards
     * @return a reader that returns {@code bytes}
     */
    static BodyReader of(byte[] bytes) {
      Objects.requireNonNull(bytes, "bytes");
      return limit -> bytes;
    }
  }
}
