package dev.idem.core.internal;

import dev.idem.core.spi.RequestSnapshot;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The credentials in a URL's text, found by one left-to-right walk of its parts: user info, the
 * value of a parameter the secret rule names in the query, or that the path parameter rule names
 * in a path segment (a servlet's {@code ;jsessionid=}), and a URL nested in a parameter's value
 * ({@code ?next=https://user:pw@host/}, or the same percent-encoded) that carries user info, such
 * a path parameter, or a parameter the nested rule names (exact names) in its query or in its
 * fragment's pairs. A value is read as a URL only if it begins as one (see {@code startsLikeUrl}).
 * A parameter name copied from HTML, {@code amp;sig} from {@code &amp;sig=}, is judged as the name
 * after {@code amp;} ({@link #withoutHtmlAmp}); a {@code ;}-separated {@code NAME=value} inside a
 * pair ({@code ?a=1;access_token=...}, as servers that split on {@code ;} read it) is judged as a
 * parameter of its own, by its name and by a URL nested in its value, unless the pair's value was
 * read as a URL (whose own {@code ;} that URL's walk judged).
 * {@link #redact} rewrites them in a URL that is only stored; {@link #findInPath} and
 * {@link #findInQuery} name the first one in a URL that will be sent, which cannot be rewritten.
 *
 * <p><b>Linear in the URL's length.</b> Every search is bounded by the part it reads (a pair, a
 * segment), never by the end of the URL: an unbounded {@code indexOf} per pair once cost a hostile
 * Location time quadratic in its length. A nested URL is walked as a string of its own, decoded
 * once, as its receiver reads a query value; each such walk is one level of at most
 * {@link #MAX_NESTING}: the values walked at one level are disjoint pieces of the level above, so
 * every level costs at most the URL's length, and the whole walk a constant times it.
 *
 * <p><b>One decoding per nested URL.</b> A nested URL's own query values are decoded when that URL
 * is walked, not before: decoding the whole value until no escape is left would also decode the
 * escapes of the URLs inside it and of their values ({@code 10%3A00}, {@code caf%C3%A9}), each
 * costing a level, and run an ordinary OAuth {@code redirect_uri} (a callback whose
 * {@code return_to} holds a path) out of levels. Only a value whose one decoding still shows no URL
 * but escapes that could become one ({@code %253F}: encoded twice) is decoded again, one more level.
 * A value that would need a level below the last is not read: it is redacted, or refused as too
 * deeply nested to check ({@link Finding.Kind#NESTED_TOO_DEEP_IN_QUERY_PARAMETER}).
 *
 * <p>Immutable and thread-safe.
 */
public final class UrlCredentials {
  /** What a credential becomes in a stored URL. */
  public static final String REDACTED = "redacted";
  /** What a parameter name copied from HTML begins with: the rest of {@code &amp;}. */
  private static final String HTML_AMP = "amp;";
  /** Levels of URLs nested (or percent-encoded) in a parameter's value that are read. */
  static final int MAX_NESTING = 4;
  /** The default rule, allowing nothing: for messages, which know no executor's settings. */
  private static final UrlCredentials DEFAULTS = new UrlCredentials(Set.of());

  /** Lower case: the rule matches names in any case, so an allow must too. */
  private final Set<String> allowed;

  /**
   * @param allowed parameter names (decoded, any case: matched as the rule matches, ignoring case)
   *     the app allows in clear, with whatever their values hold
   */
  public UrlCredentials(Set<String> allowed) {
    this.allowed = allowed.stream().map(n -> n.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
  }

  /**
   * Whether the app allowed {@code name}, in any case: the rule refuses {@code sig}, {@code Sig} and
   * {@code SIG} alike, so an allow of one spelling that left the others refused would not be one.
   */
  private boolean isAllowed(String name) {
    return !allowed.isEmpty() && allowed.contains(name.toLowerCase(Locale.ROOT));
  }

  /** The default rule with nothing allowed. */
  public static UrlCredentials defaults() {
    return DEFAULTS;
  }

  /**
   * Whether a parameter (its decoded name, any case) holds a credential: the default rule for query
   * parameters names it and the app did not allow it (in any case).
   */
  public boolean isSecretName(String name) {
    return !isAllowed(name) && RequestSnapshot.isSecretQueryParameterByDefault(name);
  }

  /**
   * Whether a path parameter (its decoded name, any case) holds a credential: the default rule for
   * path parameters names it ({@link RequestSnapshot#isSecretPathParameterByDefault}, exact names
   * only, since matrix parameters such as {@code ;author=} are ordinary) and the app did not allow
   * it (in any case).
   */
  public boolean isSecretPathName(String name) {
    return !isAllowed(name) && RequestSnapshot.isSecretPathParameterByDefault(name);
  }

  /**
   * Whether a parameter of a URL nested in a query value (its decoded name, any case) holds a
   * credential: {@link RequestSnapshot#isSecretNestedQueryParameterByDefault} names it (exact names,
   * since a return URL's {@code ?author=} or {@code ?session_id=} is ordinary) and the app did not
   * allow it (in any case).
   */
  public boolean isSecretNestedName(String name) {
    return !isAllowed(name) && RequestSnapshot.isSecretNestedQueryParameterByDefault(name);
  }

  /** Where a credential was found, for a message: never its value. */
  public record Finding(Kind kind, String name) {
    /** What holds the credential. */
    public enum Kind {
      USER_INFO, PATH_PARAMETER, QUERY_PARAMETER,
      /** A URL carrying a credential in the value of the query parameter {@code name}. */
      NESTED_IN_QUERY_PARAMETER,
      /**
       * URLs nested in the value of the query parameter {@code name} deeper than
       * {@link #MAX_NESTING} levels: not read, so not known to be free of credentials.
       */
      NESTED_TOO_DEEP_IN_QUERY_PARAMETER,
      /** A stored URL's fragment, whatever it holds. */
      FRAGMENT
    }
  }

  /**
   * {@code url} (absolute or relative, as a Location may be) with its user info, the values of its
   * credential-named path and query parameters, the whole value of a query parameter whose nested
   * URL carries a credential, and its whole fragment replaced by {@value #REDACTED}. The fragment
   * has no grammar a rule could read (a bare token, a route, pairs), and a stored URL's fragment is
   * never sent, so none is kept.
   *
   * @return {@code url} itself when it has nothing to redact; the copy is made only once a
   *     credential is found, so a URL without one costs no copy (and a URL without {@code ?},
   *     {@code #}, {@code @} or {@code ;} not even a walk)
   */
  public String redact(String url) {
    if (!hasAny(url, 0, url.length(), "?#@;")) {
      return url;
    }
    Walk walk = new Walk(url, true);
    walk.url(0, url.length(), 0, true);
    return walk.finish();
  }

  /**
   * {@code rawPath} with the values of its credential-named path parameters redacted.
   *
   * @return {@code rawPath} itself when it has none
   */
  public String redactPath(String rawPath) {
    if (rawPath.indexOf(';') < 0) {
      return rawPath;
    }
    Walk walk = new Walk(rawPath, true);
    walk.pathParameters(0, rawPath.length());
    return walk.finish();
  }

  /** The first credential-named path parameter of a raw path, or null. */
  public Finding findInPath(String rawPath) {
    if (rawPath == null || rawPath.indexOf(';') < 0) {
      return null;
    }
    Walk walk = new Walk(rawPath, false);
    walk.pathParameters(0, rawPath.length());
    return walk.found;
  }

  /**
   * The first credential in a form body's {@code name=value} pairs, or null: a field whose exact
   * name holds one ({@link #isSecretNestedName}: {@code client_secret}, {@code password},
   * {@code refresh_token}...), or a URL nested in a value that carries one.
   */
  public Finding findInFormFields(String formBody) {
    if (formBody == null || formBody.isEmpty()) {
      return null;
    }
    Walk walk = new Walk(formBody, false);
    // Read as a nested URL's query is: by exact names (access_token=, client_secret=, password=).
    // A payment API's form body (Stripe's) names fields freely, metadata[author]=, metadata[session_id]=,
    // account_token=, which the query's substring rule would refuse on every call.
    walk.pairs(0, formBody.length(), 1);
    return walk.found;
  }

  /** The first credential in a raw query (its parameters, or a URL nested in a value), or null. */
  public Finding findInQuery(String rawQuery) {
    if (rawQuery == null || rawQuery.isEmpty()) {
      return null;
    }
    Walk walk = new Walk(rawQuery, false);
    walk.pairs(0, rawQuery.length(), 0);
    return walk.found;
  }

  /**
   * One walk over one string. Redacting, it copies the string, replacing each credential (found in
   * increasing order) by {@value #REDACTED}; else it stops at the first.
   */
  private final class Walk {
    private final String s;
    private final boolean redacting;
    /** The copy, made at the first credential: most stored URLs have none, and then need none. */
    private StringBuilder out;
    /** The first finding, or null. */
    private Finding found;
    /** How far {@code s} has been copied to {@code out}. */
    private int copied;

    Walk(String s, boolean redacting) {
      this.s = s;
      this.redacting = redacting;
    }

    private boolean done() {
      return !redacting && found != null;
    }

    private void replace(int from, int to, Finding finding) {
      if (found == null) {
        found = finding;
      }
      if (redacting) {
        if (out == null) {
          out = new StringBuilder(s.length());
        }
        out.append(s, copied, from).append(REDACTED);
        copied = to;
      }
    }

    /** The redacted copy, or {@code s} itself if nothing was redacted. */
    String finish() {
      return out == null ? s : out.append(s, copied, s.length()).toString();
    }

    /**
     * The URL in {@code [from, to)}: user info, path parameters, query, fragment.
     *
     * @param stored whether this is the stored URL itself, whose fragment is redacted whole; a
     *     nested URL's fragment is read as pairs, since its value is sent with the query: after its
     *     first {@code ?} if it has one, since before it is a hash-routed app's route
     *     ({@code #/auth/callback?provider=google}), not a name
     */
    void url(int from, int to, int depth, boolean stored) {
      int hash = indexOf(s, '#', from, to);
      int partsEnd = hash < 0 ? to : hash;
      int query = indexOf(s, '?', from, partsEnd);
      int pathEnd = query < 0 ? partsEnd : query;
      int pathStart = from;
      int authority = authorityStart(from, pathEnd);
      if (authority >= 0) {
        int slash = indexOf(s, '/', authority, pathEnd);
        pathStart = slash < 0 ? pathEnd : slash;
        int at = lastIndexOf(s, '@', authority, pathStart); // user info may hold '@' (user@corp:pw)
        if (at >= 0) {
          replace(authority, at, new Finding(Finding.Kind.USER_INFO, null));
        }
      }
      if (!done()) {
        pathParameters(pathStart, pathEnd);
      }
      if (query >= 0 && !done()) {
        pairs(query + 1, partsEnd, depth);
      }
      if (hash >= 0 && hash + 1 < to && !done()) {
        if (stored) {
          replace(hash + 1, to, new Finding(Finding.Kind.FRAGMENT, null));
        } else {
          int routeQuery = indexOf(s, '?', hash + 1, to);
          pairs(routeQuery < 0 ? hash + 1 : routeQuery + 1, to, depth);
        }
      }
    }

    /** The {@code ;name=value} parameters of the path segments in {@code [from, to)}. */
    void pathParameters(int from, int to) {
      int semi = indexOf(s, ';', from, to);
      while (semi >= 0 && !done()) {
        int start = semi + 1;
        int end = start;
        while (end < to && s.charAt(end) != ';' && s.charAt(end) != '/') {
          end++;
        }
        int eq = indexOf(s, '=', start, end);
        if (eq >= 0 && end > eq + 1) {
          String name = decode(s.substring(start, eq));
          if (isSecretPathName(name)) {
            replace(eq + 1, end, new Finding(Finding.Kind.PATH_PARAMETER, name));
          }
        }
        semi = end < to && s.charAt(end) == ';' ? end : indexOf(s, ';', end, to);
      }
    }

    /**
     * The {@code &}-separated {@code name=value} pairs in {@code [from, to)}: a top-level query's
     * ({@code depth} 0) names judged by the query rule, a nested URL's by exact names
     * ({@link #isSecretNestedName}), each without a leading {@code amp;} ({@link #withoutHtmlAmp}),
     * and the {@code ;}-separated pairs inside each whose value was not read as a URL
     * ({@link #semicolonPairs}).
     */
    void pairs(int from, int to, int depth) {
      int start = from;
      while (start <= to && !done()) {
        int amp = indexOf(s, '&', start, to);
        int end = amp < 0 ? to : amp;
        int eq = indexOf(s, '=', start, end);
        if (eq >= 0 && end > eq + 1) {
          String name = withoutHtmlAmp(decode(s.substring(start, eq)));
          if (isSecretPairName(name, depth)) {
            replace(eq + 1, end, new Finding(Finding.Kind.QUERY_PARAMETER, name));
          } else {
            Nested value = isAllowed(name) ? Nested.TEXT : nested(eq + 1, end, depth);
            if (value.finding != null) {
              // The whole value: re-encoding a redacted nested URL would not give back its spelling.
              replace(eq + 1, end, new Finding(value.finding, name));
            } else if (value == Nested.TEXT) {
              // A URL read clean is not split again: its own ';' (a matrix parameter
              // /books;author=, a return URL's ?lang=en;session_id=) was judged one level down,
              // by exact names, and the wide top-level rule would misread them.
              semicolonPairs(start, end, depth);
            }
          }
        }
        start = end + 1;
      }
    }

    private boolean isSecretPairName(String name, int depth) {
      return depth == 0 ? isSecretName(name) : isSecretNestedName(name);
    }

    /**
     * The {@code ;}-separated {@code name=value} pairs after the first {@code ;} of the pair in
     * {@code [from, to)}, whose value, split on {@code &} only, held nothing the rule names and was
     * not read as a URL (a URL's own {@code ;}, a matrix parameter {@code /books;author=} or a
     * return URL's {@code ?lang=en;session_id=}, was judged one level down by exact names): a
     * server that splits on {@code ;} too (older servlet containers, Rails, Perl's CGI) reads
     * {@code ?a=1;access_token=...} as an {@code access_token} of its own. Only a piece that is
     * {@code NAME=value} with a name the rule names, or whose value is a URL carrying a credential
     * ({@code ?page=1;next=https://idp/cb?access_token=...}, read as a pair's value is, at the
     * same depth), counts; any other ({@code q=a;b}, {@code ids=1;2}, {@code sort=name;order=asc})
     * is text. Reading a piece's value as a URL reads no text twice at one level: the pair's whole
     * value, the only other candidate, was not read as one (it did not begin as a URL, or its name
     * is allowed), and the pieces are disjoint, so the walk stays linear. Raw {@code ;} only: an
     * escaped {@code %3B} is no separator to anyone.
     * Read even when the pair's name is allowed: to such a server a piece is another parameter,
     * which the app allows (or not) by its own name.
     */
    private void semicolonPairs(int from, int to, int depth) {
      int semi = indexOf(s, ';', from, to);
      while (semi >= 0 && !done()) {
        int start = semi + 1;
        int next = indexOf(s, ';', start, to);
        int end = next < 0 ? to : next;
        int eq = indexOf(s, '=', start, end);
        if (eq >= 0 && end > eq + 1) {
          String name = withoutHtmlAmp(decode(s.substring(start, eq)));
          Nested value;
          if (isSecretPairName(name, depth)) {
            replace(eq + 1, end, new Finding(Finding.Kind.QUERY_PARAMETER, name));
          } else if (!isAllowed(name) && (value = nested(eq + 1, end, depth)).finding != null) {
            // As a pair's: the whole piece value, which a ';'-splitting server follows as a URL.
            replace(eq + 1, end, new Finding(value.finding, name));
          }
        }
        semi = next;
      }
    }

    /**
     * What the value in {@code [from, to)}, read as a URL after one percent-decoding, carries:
     * {@link Nested#CREDENTIAL}, {@link Nested#TOO_DEEP} if it would need a level below
     * {@link #MAX_NESTING}, {@link Nested#CLEAN_URL}, or {@link Nested#TEXT} if it is no URL. A value that cannot hold a URL part the walk reads (see
     * {@link #mayHoldUrl}), as most values cannot ({@code red%20shoes}, {@code 10%3A00}), costs
     * one scan and no copy. A value that holds one but does not begin as a URL does
     * ({@link #startsLikeUrl}) is text, not a URL: {@code Why is my session slow? auth=ldap},
     * {@code name;key=asc}.
     */
    private Nested nested(int from, int to, int depth) {
      if (!mayHoldUrl(s, from, to)) {
        return Nested.TEXT;
      }
      int level = depth + 1;
      if (level > MAX_NESTING) {
        return Nested.TOO_DEEP; // not read, URL or text
      }
      String value = decode(s, from, to);
      boolean parts;
      while (!((parts = hasAny(value, 0, value.length(), "@?;#")) && startsLikeUrl(value))) {
        // Not a URL after one decoding: either none at all, or encoded twice (%253F, https%253A),
        // which a receiver that decodes again would read as a URL: one more decoding, one more level.
        if (!hasUrlEscape(value, parts)) {
          return Nested.TEXT;
        }
        if (++level > MAX_NESTING) {
          return Nested.TOO_DEEP;
        }
        value = decode(value);
      }
      Walk walk = new Walk(value, false);
      walk.url(0, value.length(), level, false);
      if (walk.found == null) {
        return Nested.CLEAN_URL;
      }
      return walk.found.kind() == Finding.Kind.NESTED_TOO_DEEP_IN_QUERY_PARAMETER ? Nested.TOO_DEEP : Nested.CREDENTIAL;
    }

    /**
     * Where the authority begins, or -1: after a {@code //} that is the first slash and opens the
     * URL or follows the scheme's colon ({@code /a//b@c} is a path).
     */
    private int authorityStart(int from, int pathEnd) {
      for (int i = from; i + 1 < pathEnd; i++) {
        char c = s.charAt(i);
        if (c == '/') {
          boolean slashes = s.charAt(i + 1) == '/';
          return slashes && (i == from || s.charAt(i - 1) == ':') ? i + 2 : -1;
        }
      }
      return -1;
    }
  }

  /** What {@link Walk#nested} made of a query value. */
  private enum Nested {
    /** Not read as a URL: it cannot hold a URL part, or does not begin as a URL. */
    TEXT(null),
    /** Read as a URL, which carries nothing the rules name. */
    CLEAN_URL(null),
    /** Read as a URL carrying a credential. */
    CREDENTIAL(Finding.Kind.NESTED_IN_QUERY_PARAMETER),
    /** Would need a level below {@link #MAX_NESTING}: not (all) read, so not known clean. */
    TOO_DEEP(Finding.Kind.NESTED_TOO_DEEP_IN_QUERY_PARAMETER);

    /** What a whole value so judged is redacted or refused as, or null when it is kept. */
    final Finding.Kind finding;

    Nested(Finding.Kind finding) {
      this.finding = finding;
    }
  }

  /**
   * {@code name} without the {@code amp;} its start keeps when the URL was copied from HTML with
   * {@code &amp;} separators ({@code ?sv=2022&amp;sig=...}, or {@code &amp;amp;} escaped twice):
   * split on {@code &}, such a parameter is named {@code amp;sig}, which no exact name matches,
   * though it is the {@code sig} the page meant (and that a receiver splitting on {@code ;} too
   * reads). The rule and the allow list judge the name after it, so the message names the
   * parameter an app would allow. Any case, as HTML's {@code &AMP;} is the same character.
   */
  static String withoutHtmlAmp(String name) {
    int from = 0;
    while (name.regionMatches(true, from, HTML_AMP, 0, HTML_AMP.length())) {
      from += HTML_AMP.length();
    }
    return from == 0 ? name : name.substring(from);
  }

  /**
   * Whether {@code s[from, to)}, decoded once, could hold a URL part the walk reads: user info, a
   * query, path parameters or a fragment ({@code @ ? ; #}, as written or escaped), or an escaped
   * {@code %} (a value encoded twice).
   */
  private static boolean mayHoldUrl(String s, int from, int to) {
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c == '@' || c == '?' || c == ';' || c == '#') {
        return true;
      }
      if (c == '%' && isEscape(s, i, to)) {
        int b = Character.digit(s.charAt(i + 1), 16) << 4 | Character.digit(s.charAt(i + 2), 16);
        if (b == '@' || b == '?' || b == ';' || b == '#' || b == '%') {
          return true;
        }
        i += 2;
      }
    }
    return false;
  }

  /**
   * Whether {@code value} begins as a URL a receiver would follow: after the spaces and controls a
   * URL parser strips, a scheme ({@code https:}, {@code [A-Za-z][A-Za-z0-9+.-]*:}), a path or
   * network-path reference ({@code /}, {@code //}, and {@code \}, which browsers read as
   * {@code /}), or a query- or fragment-only reference ({@code ?}, {@code #}). Free text seldom
   * does; bounded by the scheme's length.
   */
  private static boolean startsLikeUrl(String value) {
    int n = value.length();
    int i = 0;
    while (i < n && value.charAt(i) <= ' ') {
      i++;
    }
    if (i == n) {
      return false;
    }
    char c = value.charAt(i);
    if (c == '/' || c == '\\' || c == '?' || c == '#') {
      return true;
    }
    if (!isAsciiLetter(c)) {
      return false;
    }
    for (i++; i < n; i++) {
      c = value.charAt(i);
      if (c == ':') {
        return true;
      }
      if (!isAsciiLetter(c) && !(c >= '0' && c <= '9') && c != '+' && c != '.' && c != '-') {
        return false;
      }
    }
    return false;
  }

  private static boolean isAsciiLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  /**
   * Whether {@code value} has an escape that, decoded once more, could make it a URL: of a URL part
   * the walk reads ({@code @ ? ; #}) or of a {@code %}; or, when it already holds such a part
   * ({@code parts}), of the {@code : /} its start lacks ({@code https%3A%2F%2Fh%2Fcb?...}). An
   * escaped {@code :} alone ({@code 10%3A00}) is text and costs no level.
   */
  private static boolean hasUrlEscape(String value, boolean parts) {
    int n = value.length();
    for (int i = 0; i < n; i++) {
      if (value.charAt(i) == '%' && isEscape(value, i, n)) {
        int b = Character.digit(value.charAt(i + 1), 16) << 4 | Character.digit(value.charAt(i + 2), 16);
        if ("@?;#%".indexOf(b) >= 0 || (parts && ":/\\".indexOf(b) >= 0)) {
          return true;
        }
        i += 2;
      }
    }
    return false;
  }

  /** Whether {@code s} has any of {@code chars} in {@code [from, to)}. */
  private static boolean hasAny(String s, int from, int to, String chars) {
    for (int i = from; i < to; i++) {
      if (chars.indexOf(s.charAt(i)) >= 0) {
        return true;
      }
    }
    return false;
  }

  /** The first {@code c} in {@code [from, to)} of {@code s}, or -1: bounded, see the class comment. */
  private static int indexOf(String s, char c, int from, int to) {
    for (int i = from; i < to; i++) {
      if (s.charAt(i) == c) {
        return i;
      }
    }
    return -1;
  }

  /** The last {@code c} in {@code [from, to)} of {@code s}, or -1. */
  private static int lastIndexOf(String s, char c, int from, int to) {
    for (int i = to - 1; i >= from; i--) {
      if (s.charAt(i) == c) {
        return i;
      }
    }
    return -1;
  }

  private static String decode(String raw) {
    return decode(raw, 0, raw.length());
  }

  /**
   * {@code s[from, to)} percent-decoded as a query value is ({@code +} is a space, escapes are
   * UTF-8), leniently: every valid escape is decoded and a {@code %} not followed by two hex digits
   * is kept as written, as OkHttp's {@code HttpUrl}, browsers and the servers behind them read it.
   * {@link java.net.URLDecoder} refuses the whole value at one stray {@code %} instead, which would
   * leave a nested URL beside it unread ({@code ...%3Faccess_token%3Dt1%26note%3D100%}). Bytes that
   * are not UTF-8 become U+FFFD, as in {@code URLDecoder}.
   */
  static String decode(String s, int from, int to) {
    int i = from;
    while (i < to && s.charAt(i) != '%' && s.charAt(i) != '+') {
      i++;
    }
    if (i == to) {
      return s.substring(from, to); // s itself when it is the whole string
    }
    StringBuilder out = new StringBuilder(to - from).append(s, from, i);
    byte[] bytes = null;
    while (i < to) {
      char c = s.charAt(i);
      if (c == '%' && isEscape(s, i, to)) {
        if (bytes == null) {
          bytes = new byte[(to - i) / 3];
        }
        int n = 0;
        while (i < to && s.charAt(i) == '%' && isEscape(s, i, to)) { // a run: one UTF-8 sequence may span escapes
          bytes[n++] = (byte) (Character.digit(s.charAt(i + 1), 16) << 4 | Character.digit(s.charAt(i + 2), 16));
          i += 3;
        }
        out.append(new String(bytes, 0, n, StandardCharsets.UTF_8));
      } else {
        out.append(c == '+' ? ' ' : c);
        i++;
      }
    }
    return out.toString();
  }

  /** Whether the {@code %} at {@code i} starts a valid escape that ends before {@code to}. */
  private static boolean isEscape(String s, int i, int to) {
    return i + 2 < to && hexDigit(s.charAt(i + 1)) && hexDigit(s.charAt(i + 2));
  }

  private static boolean hexDigit(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }
}
