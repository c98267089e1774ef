package dev.idem.server;

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

  /** @return true when the body was over the cap and was not captured */
  public boolean overCap() {
    return body == null;
  }
}
