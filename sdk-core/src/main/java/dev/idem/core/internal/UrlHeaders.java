package dev.idem.core.internal;

import java.util.Locale;

/**
 * The response headers whose values carry URLs, and those values with the URLs' credentials
 * redacted ({@link UrlCredentials#redact}), for the copies of a response that are stored (the
 * executor's journal, the server guard's store):
 * <ul>
 *   <li>{@code Location} and {@code Content-Location}: the value is one URL;</li>
 *   <li>{@code Link} (RFC 8288): every target between {@code <} and {@code >}, and the value of
 *       every {@code anchor} parameter (a next-page link with a token in its query, a pre-signed
 *       download link);</li>
 *   <li>{@code Refresh}: the URL after the delay ({@code 5; url=https://...}, quoted or not).</li>
 * </ul>
 * Everything else in a value is kept as written. A {@code <} without its {@code >} in a Link, or a
 * quote without its end in a Refresh, runs to the end of the value, so a value cut short is
 * redacted to its end rather than passed over. Pure and thread-safe.
 */
public final class UrlHeaders {
  private static final String LOCATION = "location";
  private static final String CONTENT_LOCATION = "content-location";
  private static final String LINK = "link";
  private static final String REFRESH = "refresh";

  private UrlHeaders() {}

  /** Whether a header, by its name in any case, carries URLs that {@link #redact} reads. */
  public static boolean carriesUrls(String name) {
    // By length first: this runs for every header of every response that is stored.
    return switch (name.length()) {
      case 4 -> name.equalsIgnoreCase(LINK);
      case 7 -> name.equalsIgnoreCase(REFRESH);
      case 8 -> name.equalsIgnoreCase(LOCATION);
      case 16 -> name.equalsIgnoreCase(CONTENT_LOCATION);
      default -> false;
    };
  }

  /**
   * {@code value} of the header {@code name} (any case) with the credentials of the URLs it carries
   * redacted by {@code urls}.
   *
   * @return {@code value} itself when nothing in it is redacted, or when the header carries no URL
   */
  public static String redact(String name, String value, UrlCredentials urls) {
    String n = name.toLowerCase(Locale.ROOT);
    return switch (n) {
      case LOCATION, CONTENT_LOCATION -> urls.redact(value);
      case LINK -> link(value, urls);
      case REFRESH -> refresh(value, urls);
      default -> value;
    };
  }

  private static String link(String value, UrlCredentials urls) {
    StringBuilder out = null;
    int copied = 0;
    int n = value.length();
    int i = 0;
    while (i < n) {
      int start;
      int end;
      char c = value.charAt(i);
      if (c == '<') {
        start = i + 1;
        int close = value.indexOf('>', start);
        end = close < 0 ? n : close;
      } else if (isAnchorAt(value, i)) {
        start = valueStart(value, i + "anchor".length());
        if (start < 0) {
          i++;
          continue;
        }
        if (start < n && value.charAt(start) == '"') {
          start++;
          int close = value.indexOf('"', start);
          end = close < 0 ? n : close;
        } else {
          end = start;
          while (end < n && ";, \t".indexOf(value.charAt(end)) < 0) {
            end++;
          }
        }
      } else {
        i++;
        continue;
      }
      String url = value.substring(start, end);
      String redacted = urls.redact(url);
      if (redacted != url) {
        if (out == null) {
          out = new StringBuilder(n + 16);
        }
        out.append(value, copied, start).append(redacted);
        copied = end;
      }
      i = end + 1;
    }
    if (out == null) {
      return value;
    }
    return out.append(value, copied, n).toString();
  }

  /** Whether {@code anchor} starts a parameter name at {@code i}: after {@code ;} and any spaces. */
  private static boolean isAnchorAt(String value, int i) {
    if (!value.regionMatches(true, i, "anchor", 0, "anchor".length())) {
      return false;
    }
    int before = i - 1;
    while (before >= 0 && (value.charAt(before) == ' ' || value.charAt(before) == '\t')) {
      before--;
    }
    return before >= 0 && value.charAt(before) == ';';
  }

  /** Where a parameter's value starts after its name ends at {@code i} ({@code = } with spaces), or -1. */
  private static int valueStart(String value, int i) {
    int n = value.length();
    while (i < n && (value.charAt(i) == ' ' || value.charAt(i) == '\t')) {
      i++;
    }
    if (i >= n || value.charAt(i) != '=') {
      return -1;
    }
    i++;
    while (i < n && (value.charAt(i) == ' ' || value.charAt(i) == '\t')) {
      i++;
    }
    return i;
  }

  private static String refresh(String value, UrlCredentials urls) {
    int n = value.length();
    int i = 0;
    while (i < n && value.charAt(i) != ';' && value.charAt(i) != ',') {
      i++;
    }
    if (i >= n) {
      return value; // a delay alone
    }
    i++;
    while (i < n && (value.charAt(i) == ' ' || value.charAt(i) == '\t')) {
      i++;
    }
    if (value.regionMatches(true, i, "url", 0, 3)) {
      int start = valueStart(value, i + 3);
      if (start >= 0) {
        i = start;
      }
    }
    int end = n;
    if (i < n && (value.charAt(i) == '"' || value.charAt(i) == '\'')) {
      char quote = value.charAt(i);
      i++;
      int close = value.indexOf(quote, i);
      end = close < 0 ? n : close;
    }
    String url = value.substring(i, end);
    String redacted = urls.redact(url);
    return redacted == url ? value : value.substring(0, i) + redacted + value.substring(end);
  }
}
