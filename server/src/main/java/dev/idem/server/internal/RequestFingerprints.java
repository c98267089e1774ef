package dev.idem.server.internal;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.server.FingerprintMode;
import dev.idem.server.GuardRequest;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The fingerprint of a request as the guard checks it against its key's record: sdk-core's
 * {@link Fingerprinter}, the client's, over method, path and query (without its credential
 * parameters: {@link SecretQueryParameters}), and the body as sent (a form's without its
 * {@code access_token}).
 */
public final class RequestFingerprints {
  private static final String FORM = "application/x-www-form-urlencoded";

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
    return of(request, SecretQueryParameters.removedFrom(request.rawQuery()), withoutCredentials(request, body),
        mode);
  }

  /**
   * The fingerprint of the request with its query and body as written, credential parameters
   * included, as the guard made it before {@link SecretQueryParameters}; null when they have none
   * (then it is {@link #of(GuardRequest, byte[], FingerprintMode)}'s).
   *
   * @param request the request
   * @param body its body, as read
   * @param mode how the body is fingerprinted
   * @return the fingerprint, or null
   * @throws IllegalArgumentException if the request's path cannot be made a URI
   */
  public static Fingerprint asWritten(GuardRequest request, byte[] body, FingerprintMode mode) {
    return both(request, body, mode).asWritten();
  }

  /**
   * A request's fingerprint and, if its query or body held credentials, its fingerprint as written.
   *
   * @param fingerprint {@link #of(GuardRequest, byte[], FingerprintMode)}'s
   * @param asWritten {@link #asWritten}'s, or null
   */
  public record Both(Fingerprint fingerprint, Fingerprint asWritten) {}

  /**
   * {@link #of} and {@link #asWritten} at once, the credentials looked for once (a form's body is
   * read as text once, not twice): what the guard computes for each keyed request.
   *
   * @param request the request
   * @param body its body, as read
   * @param mode how the body is fingerprinted
   * @return both fingerprints
   * @throws IllegalArgumentException if the request's path cannot be made a URI
   */
  public static Both both(GuardRequest request, byte[] body, FingerprintMode mode) {
    String query = request.rawQuery();
    String keptQuery = SecretQueryParameters.removedFrom(query);
    byte[] keptBody = withoutCredentials(request, body);
    Fingerprint fingerprint = of(request, keptQuery, keptBody, mode);
    boolean none = Objects.equals(keptQuery, query) && keptBody == body;
    return new Both(fingerprint, none ? null : of(request, query, body, mode));
  }

  /**
   * A form-encoded body ({@code application/x-www-form-urlencoded}) without its bearer token, which
   * RFC 6750 section 2.2 allows there too ({@code access_token=} in the body of a POST;
   * {@link SecretQueryParameters#FORM_NAMES}: only that name, a form's other fields being data).
   * {@code body} itself when it is no form or has none. The form's bytes are read one character a
   * byte (ISO-8859-1), so that every other byte is kept as sent, whatever the form's charset: the
   * names are ASCII.
   */
  static byte[] withoutCredentials(GuardRequest request, byte[] body) {
    String type = request.contentType();
    if (body.length == 0 || type == null || !type.regionMatches(true, 0, FORM, 0, FORM.length())) {
      return body;
    }
    if (type.length() > FORM.length() && type.charAt(FORM.length()) != ';' && type.charAt(FORM.length()) != ' ') {
      return body;  // another type that starts alike
    }
    String form = new String(body, StandardCharsets.ISO_8859_1);
    String kept = SecretQueryParameters.removedFrom(form, SecretQueryParameters.FORM_NAMES);
    if (kept == form) {
      return body;
    }
    return kept == null ? new byte[0] : kept.getBytes(StandardCharsets.ISO_8859_1);
  }

  private static Fingerprint of(GuardRequest request, String rawQuery, byte[] body, FingerprintMode mode) {
    String contentType = mode == FingerprintMode.CANONICAL_JSON ? request.contentType() : null;
    RequestSnapshot snapshot = RequestSnapshot.builder(request.method(), uri(request.path(), rawQuery))
        .body(body, contentType)
        .build();
    return Fingerprinter.defaults().fingerprint(snapshot);
  }

  private static URI uri(String requestPath, String rawQuery) {
    String path = requestPath.isEmpty() ? "/" : requestPath;
    try {
      return new URI("http://idem.invalid" + path + (rawQuery == null ? "" : "?" + rawQuery));
    } catch (URISyntaxException e) {
      try {
        // A path the adapter did not encode: let URI quote it, so it still has one fingerprint.
        return new URI("http", "idem.invalid", path, rawQuery, null);
      } catch (URISyntaxException again) {
        throw new IllegalArgumentException("unusable request path", again);
      }
    }
  }
}
