package dev.idem.server.internal;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Takes the credential query parameters out of a raw query, for the request's fingerprint: every
 * {@code &}-separated parameter whose name (percent-decoded, any case) is exactly one of
 * {@link #NAMES}. A client that authenticates with {@code ?access_token=} (RFC 6750 section 2.3)
 * and refreshes its token between a timed-out attempt and its retry sends the same operation under
 * the same key; with the token in the fingerprint it was refused 422 "key reused", which clients
 * take as a permanent failure although the first attempt's effect exists.
 *
 * <p>Exact names, not the client journal's broad rule ({@code RequestSnapshot}'s: any name holding
 * {@code auth}, {@code session}, {@code token}...): that rule errs towards hiding, which costs a
 * journal nothing, but here a name it matched ({@code ?author=}, {@code ?session=2},
 * {@code ?token=} for a card token) would stop telling two different operations apart, and a key
 * reused for the other one would be replayed the first one's answer. The names are those that only
 * ever authenticate the request itself: OAuth's bearer token, the API-key spellings, and every
 * parameter of an AWS (SigV4) or Google (V4) signed URL's signature. A query without such a parameter, and the records stored for
 * it, are unchanged; a record stored under a query that had one, before this rule, is matched by
 * the fingerprint of the query as written (see {@code IdempotencyGuard}).
 *
 * <p>Linear in the query's length. Pure and thread-safe.
 */
public final class SecretQueryParameters {
  /** The names (lower case) of query parameters that are credentials and no part of an operation. */
  public static final Set<String> NAMES = Set.of("access_token", "api_key", "api-key", "apikey",
      // A signed URL's whole signature: re-signing changes its date (and may change its expiry)
      // with the signature, so leaving only the signature and credential out kept a re-signed retry
      // another operation.
      "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-expires", "x-amz-security-token",
      "x-amz-signedheaders", "x-amz-signature",
      "x-goog-algorithm", "x-goog-credential", "x-goog-date", "x-goog-expires", "x-goog-signedheaders",
      "x-goog-signature");

  /**
   * The names (lower case) of a form-encoded body's parameters that are credentials: only RFC 6750
   * section 2.2's {@code access_token}. A form's {@code api_key} field is as often the operation's
   * data (an endpoint that connects an account and stores the key it is given), which must tell two
   * operations apart.
   */
  public static final Set<String> FORM_NAMES = Set.of("access_token");

  private SecretQueryParameters() {}

  /**
   * How many values a raw query gives each credential parameter ({@link #NAMES}), by the name as
   * the query spells it, percent-decoded: what a servlet request's parameter map, which merges the
   * query's parameters (first) with a form's under the same name, got from the query.
   *
   * @param rawQuery a raw query, or null
   * @return the count of each credential name's values, by its decoded spelling; empty if none
   */
  public static Map<String, Integer> valuesIn(String rawQuery) {
    if (rawQuery == null || rawQuery.isEmpty()) {
      return Map.of();
    }
    Map<String, Integer> found = new HashMap<>();
    eachParameter(rawQuery, (name, start, end) -> {
      if (NAMES.contains(name.toLowerCase(Locale.ROOT))) {
        found.merge(name, 1, Integer::sum);
      }
    });
    return found;
  }

  /** One {@code &}-separated parameter: its decoded name and where it lies, {@code [start, end)}. */
  private interface Parameter {
    void at(String name, int start, int end);
  }

  /**
   * Hands each parameter of {@code rawQuery} to {@code each}, in order, reading each character a
   * bounded number of times (a name twice, to find its end and to decode it, a value once), so that
   * a query of many parameters costs its length. (A first version found each {@code =} with
   * {@code indexOf('=', start)}, which does not stop at the parameter's {@code &}: {@code a&a&a...}
   * rescanned the rest of the query for every parameter, 750 ms for 400 KB.)
   */
  private static void eachParameter(CharSequence rawQuery, Parameter each) {
    int n = rawQuery.length();
    int start = 0;
    while (start <= n) {
      int nameEnd = start;
      for (char c; nameEnd < n && (c = rawQuery.charAt(nameEnd)) != '&' && c != '='; nameEnd++) {
        // to the end of the name
      }
      int end = nameEnd;
      while (end < n && rawQuery.charAt(end) != '&') {
        end++;
      }
      each.at(SecretPathParameters.decode(rawQuery, start, nameEnd), start, end);
      start = end + 1;
    }
  }

  /**
   * @param rawQuery a raw (encoded) query, without the {@code ?}, or null
   * @return {@code rawQuery} without its credential parameters (null if none is left);
   *     {@code rawQuery} itself when it has none
   */
  public static String removedFrom(String rawQuery) {
    if (rawQuery == null) {
      return null;
    }
    return removedFrom(rawQuery, NAMES);
  }

  /**
   * @param rawQuery a raw (encoded) query or form body, or null
   * @param names the names (lower case) to take out
   * @return {@code rawQuery} without the parameters of those names (null if none is left);
   *     {@code rawQuery} itself when it has none
   */
  public static String removedFrom(String rawQuery, Set<String> names) {
    if (rawQuery == null) {
      return null;
    }
    StringBuilder out = removed(rawQuery, names);
    if (out == null) {
      return rawQuery;
    }
    return out.length() == 0 ? null : out.toString();
  }

  /**
   * The scan ({@link #eachParameter}), linear in the query's length: each character is read a
   * bounded number of times, and once more if copied.
   *
   * @return the query without its credential parameters, or null when it has none
   */
  static StringBuilder removed(CharSequence rawQuery) {
    return removed(rawQuery, NAMES);
  }

  private static StringBuilder removed(CharSequence rawQuery, Set<String> names) {
    StringBuilder[] out = new StringBuilder[1];
    eachParameter(rawQuery, (name, start, end) -> {
      boolean secret = names.contains(name.toLowerCase(Locale.ROOT));
      if (secret && out[0] == null) {
        out[0] = new StringBuilder(rawQuery.length());
        out[0].append(rawQuery, 0, start == 0 ? 0 : start - 1);
      } else if (!secret && out[0] != null) {
        if (out[0].length() > 0) {
          out[0].append('&');
        }
        out[0].append(rawQuery, start, end);
      }
    });
    return out[0];
  }
}
