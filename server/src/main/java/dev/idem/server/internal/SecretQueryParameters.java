package dev.idem.server.internal;

import dev.idem.core.spi.RequestSnapshot;

/**
 * Takes the credential query parameters out of a raw query, for the request's fingerprint: every
 * {@code &}-separated parameter whose name (percent-decoded, any case) the client's rule names
 * ({@link RequestSnapshot#isSecretQueryParameterByDefault}: {@code access_token},
 * {@code api_key}, {@code sig}...). A client that authenticates with {@code ?access_token=}
 * (RFC 6750 section 2.3) and refreshes its token between a timed-out attempt and its retry sends the
 * same operation under the same key; with the token in the fingerprint it was refused 422 "key
 * reused", which clients take as a permanent failure although the first attempt's effect exists.
 * As {@link SecretPathParameters} does for the path. A query without such a parameter, and the
 * records stored for it before, are unchanged.
 *
 * <p>Linear in the query's length. Pure and thread-safe.
 */
public final class SecretQueryParameters {
  private SecretQueryParameters() {}

  /**
   * @param rawQuery a raw (encoded) query, without the {@code ?}, or null
   * @return {@code rawQuery} without its credential parameters (null if none is left);
   *     {@code rawQuery} itself when it has none
   */
  public static String removedFrom(String rawQuery) {
    if (rawQuery == null) {
      return null;
    }
    int n = rawQuery.length();
    StringBuilder out = null;
    int start = 0;
    while (start <= n) {
      int end = rawQuery.indexOf('&', start);
      if (end < 0) {
        end = n;
      }
      int eq = rawQuery.indexOf('=', start);
      String name = SecretPathParameters.decode(rawQuery, start, eq < 0 || eq > end ? end : eq);
      boolean secret = !name.isEmpty() && RequestSnapshot.isSecretQueryParameterByDefault(name);
      if (secret && out == null) {
        out = new StringBuilder(n);
        out.append(rawQuery, 0, start == 0 ? 0 : start - 1);
      } else if (!secret && out != null) {
        if (out.length() > 0) {
          out.append('&');
        }
        out.append(rawQuery, start, end);
      }
      start = end + 1;
    }
    if (out == null) {
      return rawQuery;
    }
    return out.length() == 0 ? null : out.toString();
  }
}
