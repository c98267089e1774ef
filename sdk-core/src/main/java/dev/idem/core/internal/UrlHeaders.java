package dev.idem.core.internal;

/**
 * The headers whose values carry URLs, and those values with the URLs' credentials redacted
 * ({@link UrlCredentials#redact}), for the copies of a response that are stored (the executor's
 * journal, the server guard's store), and to tell which of a request's headers the journal must
 * leave out ({@link SecretFilter#persistable(dev.idem.core.spi.RequestSnapshot)}):
 * <ul>
 *   <li>{@code Location}, {@code Content-Location} and {@code Referer}: the value is one URL;</li>
 *   <li>{@code Link} (RFC 8288): every target between {@code <} and {@code >}, the value of every
 *       {@code anchor} parameter, and every URL of an {@code imagesrcset} parameter (the HTML
 *       standard's srcset of a preload link): a next-page link with a token in its query, a
 *       pre-signed download or image link. A parameter's quoted value is skipped whole, so a
 *       {@code <}, {@code ;} or {@code #} in a title is not read as a target, a parameter or a
 *       fragment, and a stray quote elsewhere (a title's unescaped inch mark) hides nothing;
 *       an unquoted {@code anchor} (outside the RFC's grammar, but written) is read as a URL, its
 *       own {@code ;jsessionid=}, matrix parameters and {@code ?fields=id,name} included, up to a
 *       space, the comma before the next link, or a {@code ;} whose parameter has a quoted
 *       value;</li>
 *   <li>{@code Refresh}: the URL after the delay, as the HTML standard's refresh parser finds it
 *       ({@code 5; url=https://...}, {@code 5 url=...}, {@code 0,'...'}: spaces, one {@code ;} or
 *       {@code ,}, an optional {@code url=}, optional quotes), but a quoted URL is closed only by
 *       its last quote, and only when nothing but separators follows it.</li>
 * </ul>
 * Everything else in a value is kept as written. A {@code <} without its {@code >}, or a quote
 * without its end, runs to the end of the value, so a value cut short is redacted to its end rather
 * than passed over. Linear in the value's length; pure and thread-safe.
 */
public final class UrlHeaders {
  private static final String LOCATION = "location";
  private static final String CONTENT_LOCATION = "content-location";
  private static final String LINK = "link";
  private static final String REFRESH = "refresh";
  private static final String REFERER = "referer";

  private UrlHeaders() {}

  /** Whether a header, by its name in any case, carries URLs that {@link #redact} reads. */
  public static boolean carriesUrls(String name) {
    return kind(name) != null;
  }

  /**
   * {@code value} of the header {@code name} (any case) with the credentials of the URLs it carries
   * redacted by {@code urls}.
   *
   * @return {@code value} itself when nothing in it is redacted, or when the header carries no URL
   */
  public static String redact(String name, String value, UrlCredentials urls) {
    String kind = kind(name);
    if (kind == null) {
      return value;
    }
    return switch (kind) {
      case LINK -> link(value, urls);
      case REFRESH -> refresh(value, urls);
      default -> urls.redact(value);
    };
  }

  /**
   * Which of the five headers {@code name} is, or null. One case-insensitive comparison, the same
   * for {@link #carriesUrls} and {@link #redact}, so that no name is said to carry URLs and then
   * passed over. By length first: this runs for every header of every response that is stored.
   */
  private static String kind(String name) {
    String kind = switch (name.length()) {
      case 4 -> LINK;
      case 7 -> name.charAt(3) == 'r' || name.charAt(3) == 'R' ? REFRESH : REFERER;
      case 8 -> LOCATION;
      case 16 -> CONTENT_LOCATION;
      default -> null;
    };
    return kind != null && name.equalsIgnoreCase(kind) ? kind : null;
  }

  /**
   * A Link's targets, and its {@code anchor} and {@code imagesrcset} parameters (the HTML
   * standard's srcset of a preload link: URLs with descriptors), redacted. A parameter's quoted
   * value is skipped whole (see the class comment); a quote anywhere else is read as any other
   * character.
   */
  private static String link(String value, UrlCredentials urls) {
    Rewrite out = new Rewrite(value, urls);
    int n = value.length();
    int i = 0;
    while (i < n) {
      char c = value.charAt(i);
      if (c == '<') {
        int close = value.indexOf('>', i + 1);
        int end = close < 0 ? n : close;
        out.redact(i + 1, end);
        i = end + 1;
      } else if (c == ';') {
        i = parameter(value, i + 1, out);
      } else {
        i++;
      }
    }
    return out.finish();
  }

  /**
   * Reads the parameter that starts at {@code i} (after its {@code ;}), redacting the URLs of an
   * {@code anchor} or {@code imagesrcset}; returns where the scan goes on.
   */
  private static int parameter(String value, int i, Rewrite out) {
    int n = value.length();
    i = skipSpaces(value, i);
    int nameStart = i;
    while (i < n && isTokenChar(value.charAt(i))) {
      i++;
    }
    int nameEnd = i;
    boolean anchor = nameEnd - nameStart == 6 && value.regionMatches(true, nameStart, "anchor", 0, 6);
    i = skipSpaces(value, i);
    if (i >= n || value.charAt(i) != '=') {
      return i;
    }
    i = skipSpaces(value, i + 1);
    int start;
    int end;
    int next;
    if (i < n && value.charAt(i) == '"') {
      start = i + 1;
      end = quotedEnd(value, i);
      next = end + 1;
    } else {
      start = i;
      end = i;
      // A token, as RFC 8288 has it: to a ';', a space or a comma, where the scan goes on. An
      // unquoted anchor is a URL outside that grammar, read as one (see endsUnquotedAnchor).
      while (end < n && !(anchor ? endsUnquotedAnchor(value, end) : endsToken(value.charAt(end)))) {
        end++;
      }
      // An anchor's trailing ';' (before "; nopush", say) starts the next parameter, which the
      // scan reads from there; it is no part of the URL, whose last value would take it along.
      while (anchor && end > start && value.charAt(end - 1) == ';') {
        end--;
      }
      next = end;
    }
    if (anchor) {
      out.redact(start, end);
    } else if (nameEnd - nameStart == 11 && value.regionMatches(true, nameStart, "imagesrcset", 0, 11)) {
      srcset(value, start, end, out);
    }
    return next;
  }

  private static boolean endsToken(char c) {
    return c == ';' || c == ',' || isSpace(c);
  }

  /**
   * Whether an unquoted anchor, a URL outside RFC 8288's grammar that servers still write (an
   * {@code encodeURL("/cart")}), ends at {@code i}. Its own {@code ;} and {@code ,} are the URL's
   * ({@code ;jsessionid=}, a matrix parameter such as {@code ;type=suv}, a query split on
   * {@code ;}, {@code ?fields=id,name}), left to the URL rule, so no name can cut it short; it ends
   * at a space, at the comma before the next link's {@code <}, or at a {@code ;} whose parameter
   * has a quoted value (a URL holds no {@code "}): the compact {@code ;title="..."} spelling.
   */
  private static boolean endsUnquotedAnchor(String value, int i) {
    char c = value.charAt(i);
    int n = value.length();
    if (isSpace(c)) {
      return true;
    }
    if (c == ',') {
      int j = skipSpaces(value, i + 1);
      return j >= n || value.charAt(j) == '<';
    }
    if (c != ';') {
      return false;
    }
    int nameEnd = skipSpaces(value, i + 1);
    while (nameEnd < n && isTokenChar(value.charAt(nameEnd))) {
      nameEnd++;
    }
    int after = skipSpaces(value, nameEnd);
    if (after < n && value.charAt(after) == '=') {
      int v = skipSpaces(value, after + 1);
      return v < n && value.charAt(v) == '"';
    }
    return false;
  }

  /** Each candidate's URL of the srcset in {@code [start, end)}: the run up to a space, less trailing commas. */
  private static void srcset(String value, int start, int end, Rewrite out) {
    int j = start;
    while (j < end) {
      while (j < end && (isSpace(value.charAt(j)) || value.charAt(j) == ',')) {
        j++;
      }
      int urlStart = j;
      while (j < end && !isSpace(value.charAt(j))) {
        j++;
      }
      int urlEnd = j;
      while (urlEnd > urlStart && value.charAt(urlEnd - 1) == ',') {
        urlEnd--;
      }
      if (urlEnd > urlStart) {
        out.redact(urlStart, urlEnd);
      }
      if (urlEnd < j) {
        continue; // the URL ended with the candidate's comma: no descriptors
      }
      while (j < end && value.charAt(j) != ',') {
        j++;
      }
    }
  }

  /**
   * A Refresh's URL, read as the HTML standard's refresh parser reads it: after the delay (digits
   * and dots), spaces and at most one {@code ;} or {@code ,}, an optional {@code url=}, and
   * optional quotes. Whatever follows the delay is taken for the URL even where a browser would
   * ignore the header, since the journal would keep it all the same.
   */
  private static String refresh(String value, UrlCredentials urls) {
    int n = value.length();
    int i = skipSpaces(value, 0);
    while (i < n && (Character.isDigit(value.charAt(i)) || value.charAt(i) == '.')) {
      i++;
    }
    i = skipSpaces(value, i);
    if (i < n && (value.charAt(i) == ';' || value.charAt(i) == ',')) {
      i = skipSpaces(value, i + 1);
    }
    if (i >= n) {
      return value; // a delay alone
    }
    if (value.regionMatches(true, i, "url", 0, 3)) {
      int j = skipSpaces(value, i + 3);
      if (j < n && value.charAt(j) == '=') {
        i = skipSpaces(value, j + 1);
      }
    }
    int end = n;
    if (i < n && (value.charAt(i) == '"' || value.charAt(i) == '\'')) {
      // Closed by the last such quote, and only if nothing but separators follows it: an apostrophe
      // is a legal URL character (/authors/o'reilly), and a browser that stops at it still leaves
      // the rest in the journal. Without such a quote the URL runs to the end.
      char quote = value.charAt(i);
      i++;
      int close = value.lastIndexOf(quote);
      end = close >= i && onlySeparatorsAfter(value, close) ? close : n;
    }
    Rewrite out = new Rewrite(value, urls);
    out.redact(i, end);
    return out.finish();
  }

  /**
   * The index of the {@code "} that closes the quoted string opening at {@code open}, a
   * backslash escaping the character after it; the value's length if none does.
   */
  private static int quotedEnd(String value, int open) {
    int n = value.length();
    for (int i = open + 1; i < n; i++) {
      char c = value.charAt(i);
      if (c == '\\') {
        i++;
      } else if (c == '"') {
        return i;
      }
    }
    return n;
  }

  /** Whether nothing but spaces, {@code ;} and {@code ,} follows {@code i}. */
  private static boolean onlySeparatorsAfter(String value, int i) {
    for (int j = i + 1; j < value.length(); j++) {
      char c = value.charAt(j);
      if (!isSpace(c) && c != ';' && c != ',') {
        return false;
      }
    }
    return true;
  }

  private static int skipSpaces(String value, int i) {
    while (i < value.length() && isSpace(value.charAt(i))) {
      i++;
    }
    return i;
  }

  private static boolean isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
  }

  /** RFC 9110's tchar. */
  private static boolean isTokenChar(char c) {
    return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
  }

  /** A value rewritten where its URLs change; the value itself until one does. */
  private static final class Rewrite {
    private final String value;
    private final UrlCredentials urls;
    private StringBuilder out;
    private int copied;

    Rewrite(String value, UrlCredentials urls) {
      this.value = value;
      this.urls = urls;
    }

    /** Redacts the URL in {@code [start, end)}, which begins at or after every earlier one's end. */
    void redact(int start, int end) {
      String url = value.substring(start, end);
      String redacted = urls.redact(url);
      if (redacted == url) {
        return;
      }
      if (out == null) {
        out = new StringBuilder(value.length() + 16);
      }
      out.append(value, copied, start).append(redacted);
      copied = end;
    }

    String finish() {
      return out == null ? value : out.append(value, copied, value.length()).toString();
    }
  }
}
