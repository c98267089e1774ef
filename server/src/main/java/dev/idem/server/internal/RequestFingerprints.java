package dev.idem.server.internal;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.server.FingerprintMode;
import dev.idem.server.GuardRequest;
import java.net.URI;
import java.net.URISyntaxException;

/**
 * The fingerprint of a request as the guard checks it against its key's record: sdk-core's
 * {@link Fingerprinter}, the client's, over method, path and query, and the body as sent.
 */
public final class RequestFingerprints {
  private RequestFingerprints() {
  }

  /**
   * @param request the request
   * @param body its body, as read
   * @param mode how the body is fingerprinted
   * @return the fingerprint
   * @throws IllegalArgumentException if the request's path cannot be made a URI
   */
  public static Fingerprint of(GuardRequest request, byte[] body, FingerprintMode mode) {
    String contentType = mode == FingerprintMode.CANONICAL_JSON ? request.contentType() : null;
    RequestSnapshot snapshot = RequestSnapshot.builder(request.method(), uri(request))
        .body(body, contentType)
        .build();
    return Fingerprinter.defaults().fingerprint(snapshot);
  }

  private static URI uri(GuardRequest r) {
    String path = r.path().isEmpty() ? "/" : r.path();
    try {
      return new URI("http://idem.invalid" + path + (r.rawQuery() == null ? "" : "?" + r.rawQuery()));
    } catch (URISyntaxException e) {
      try {
        // A path the adapter did not encode: let URI quote it, so it still has one fingerprint.
        return new URI("http", "idem.invalid", path, r.rawQuery(), null);
      } catch (URISyntaxException again) {
        throw new IllegalArgumentException("unusable request path", again);
      }
    }
  }
}
