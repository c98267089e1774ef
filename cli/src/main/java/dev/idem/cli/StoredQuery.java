package dev.idem.cli;

import dev.idem.core.spi.RequestSnapshot;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A journaled query as {@code journal show} prints it: every parameter by its name, as written and
 * in order, with the value of each that holds a credential replaced by {@value #REDACTED}. The
 * executor journals no credential today (it refuses such a request), but a journal an older
 * version wrote may hold them: until 57fdc7f9 its rule knew neither {@code ?key=} nor
 * {@code ?sig=}, nor a credential in a URL nested in a query value.
 *
 * <p>Judged by the executor's default rules as sdk-core publishes them: a parameter's name by
 * {@link RequestSnapshot#isSecretQueryParameterByDefault}, the names in a URL nested in a value by
 * {@link RequestSnapshot#isSecretNestedQueryParameterByDefault}. The executor's own walk of a URL
 * is internal to sdk-core, which no other module may use; this one is simpler and, where it
 * differs, blanks more, never less: a {@code ;}-separated piece of a parameter is judged as a
 * parameter of its own (as the executor does, and as servers that split on {@code ;} read it),
 * and a value is blanked whole if, at any of its first levels of percent-encoding, it holds user
 * info after {@code ://} or a parameter name the nested rule names, wherever in it. A blanked
 * value is only ever printed, never sent.
 *
 * <p>Stateless and thread-safe.
 */
final class StoredQuery {
  /** What a credential's value is printed as: the word {@link RequestSnapshot#redactedUri} uses. */
  static final String REDACTED = "redacted";
  /** Levels of percent-encoding read; a value still encoded after them is blanked, unread. */
  private static final int LEVELS = 5;
  /** A parameter name inside a value: after a query, fragment or parameter separator. */
  private static final Pattern NESTED_NAME = Pattern.compile("[?&#;]([^?&#;=/]+)=");

  private StoredQuery() {}

  /**
   * {@code rawQuery} with the values of its credentials replaced.
   *
   * @param rawQuery a query as journaled, without its {@code ?}
   * @return the query to print; the same text where nothing holds a credential
   */
  static String shown(String rawQuery) {
    StringBuilder out = new StringBuilder(rawQuery.length());
    int start = 0;
    for (int i = 0; i <= rawQuery.length(); i++) {
      if (i == rawQuery.length() || rawQuery.charAt(i) == '&' || rawQuery.charAt(i) == ';') {
        out.append(parameter(rawQuery.substring(start, i)));
        if (i < rawQuery.length()) {
          out.append(rawQuery.charAt(i));
        }
        start = i + 1;
      }
    }
    return out.toString();
  }

  private static String parameter(String raw) {
    int eq = raw.indexOf('=');
    if (eq < 0 || eq == raw.length() - 1) {
      return raw;
    }
    String value = raw.substring(eq + 1);
    return RequestSnapshot.isSecretQueryParameterByDefault(decoded(raw.substring(0, eq))) || holdsCredential(value)
        ? raw.substring(0, eq + 1) + REDACTED : raw;
  }

  private static boolean holdsCredential(String value) {
    String v = value;
    for (int level = 0; level < LEVELS; level++) {
      if (namesCredential(v)) {
        return true;
      }
      String d = decoded(v);
      if (d.equals(v)) {
        return false;
      }
      v = d;
    }
    return true;
  }

  private static boolean namesCredential(String v) {
    for (int scheme = v.indexOf("://"); scheme >= 0; scheme = v.indexOf("://", scheme + 3)) {
      for (int i = scheme + 3; i < v.length() && "/?#".indexOf(v.charAt(i)) < 0; i++) {
        if (v.charAt(i) == '@') {
          return true;
        }
      }
    }
    Matcher m = NESTED_NAME.matcher(v);
    while (m.find()) {
      if (RequestSnapshot.isSecretNestedQueryParameterByDefault(decoded(m.group(1)))) {
        return true;
      }
    }
    return false;
  }

  /** {@code raw} percent-decoded once; as it is if it is not valid percent-encoding. */
  private static String decoded(String raw) {
    if (raw.indexOf('%') < 0 && raw.indexOf('+') < 0) {
      return raw;
    }
    try {
      return URLDecoder.decode(raw, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return raw;
    }
  }
}
