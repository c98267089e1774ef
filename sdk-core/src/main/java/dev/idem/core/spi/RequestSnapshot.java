package dev.idem.core.spi;

import dev.idem.core.internal.HeaderMaps;
import dev.idem.core.internal.SnapshotAccess;
import dev.idem.core.internal.UriAuthority;
import dev.idem.core.internal.UrlCredentials;
import dev.idem.core.internal.UrlHeaders;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * What is needed to send a request again, possibly from another process after a restart: method,
 * URI, persistable headers, body bytes and content type, and the request's own response timeout if
 * it had one (so that a queued or resumed attempt is bounded as the live one would have been).
 *
 * <p>Header names are stored in lower case, in sorted order, so two snapshots of the same request
 * are equal however the client spelled the names. Secrets do not belong here: the executor removes
 * the headers its rule names (by default {@link #isSecretByDefault(String)}, plus any the app adds,
 * minus any it explicitly allows) before journaling, and the transport re-applies them on every
 * attempt. It also journals the URI without its fragment, which no HTTP client sends (an
 * {@code #access_token=...} would otherwise be kept in clear), and refuses a URI with user info, a
 * secret-looking query parameter ({@link #isSecretQueryParameterByDefault(String)}) or path
 * parameter ({@link #isSecretPathParameterByDefault(String)}), or a URL nested in a query
 * parameter's value that carries one of these.
 *
 * <p>Immutable and thread-safe; byte arrays are copied in and out.
 */
public final class RequestSnapshot {
  /**
   * Headers that are secrets by their exact name (lower case). The executor keeps these out of
   * every journal it writes to (requests and stored responses), whatever journal it is and even
   * when told to allow them: {@code allowHeaders} cannot. {@code JdbcJournal} also strips them on its
   * own from whatever any caller hands it; {@code InMemoryJournal} keeps what it is handed
   * directly, since it never leaves the process and a check there would cost every call. The
   * executor's default rule is wider: see {@link #isSecretByDefault(String)}. {@code dpop} is an
   * RFC 9449 proof of possession, a credential bound to the access token {@code Authorization}
   * carries: useless and stale without it on a resume, and a replayable proof in the file.
   */
  public static final Set<String> DEFAULT_SECRET_HEADERS =
      Set.of("authorization", "proxy-authorization", "dpop", "cookie", "set-cookie");

  /**
   * Fragments that make a header or query parameter name a secret by default when the name,
   * lower-cased and with {@code _} and {@code .} read as {@code -}, contains one of them. Wide on
   * purpose: a false positive costs a header the transport must re-apply (or an explicit allow),
   * a false negative leaves a credential readable in a file for as long as the journal keeps it.
   * A name ending in {@code -key} is a secret too ({@link #isSecretByDefault(String)}): a fragment
   * {@code key} would also match {@code X-Keyword} or {@code Monkey}. The short spellings of a
   * password ({@code pwd}, {@code passwd}, {@code passphrase}), a bare {@code jwt}
   * ({@code ?jwt=}, {@code X-JWT-Assertion}) and OAuth's {@code client-assertion} (a signed JWT
   * that authenticates the client) are each a credential no other fragment names.
   */
  public static final List<String> DEFAULT_SECRET_NAME_PARTS =
      List.of("api-key", "apikey", "token", "secret", "password", "passwd", "pwd", "passphrase", "session",
          "signature", "auth", "credential", "jwt", "client-assertion");

  /**
   * Query (and path) parameter names that are secrets by their exact name (lower case), besides
   * those {@link #isSecretByDefault(String)} names: an Azure shared access signature's {@code sig}
   * and a Google API key's {@code key}. {@code sig} only as a parameter name, never as a header
   * name: exact and short, it would match innocent headers, and a header left out must be
   * re-applied on resume ({@code key} is a secret header name too, by
   * {@link #isSecretByDefault(String)}'s {@code -key} rule). {@code key} is also used innocently
   * ({@code ?key=invoices/1.pdf}); such a request is refused like any secret-looking query
   * parameter, and the app allows it by name (see {@link #isSecretQueryParameterByDefault(String)}).
   */
  public static final Set<String> DEFAULT_SECRET_QUERY_PARAMETERS = Set.of("sig", "key");

  /**
   * Names (lower case, exact) that hold a credential in the query or fragment of a URL nested in a
   * query parameter's value ({@code ?redirect_uri=https://app/cb?access_token=...}), besides those
   * {@link #isSecretPathParameterByDefault(String)} names. Exact, not the substring rule of
   * {@link #isSecretByDefault(String)}: a nested URL is a return address whose own parameters
   * ({@code ?author=}, {@code ?session_id={CHECKOUT_SESSION_ID}}, {@code ?session=2}) were never
   * refused before the rule read them. Wider than the path rule, whose matrix parameters include
   * an ordinary {@code ;token=}: a nested {@code token=} is how implicit grants hand one out.
   */
  private static final Set<String> NESTED_SECRET_QUERY_PARAMETERS = Set.of(
      "access_token", "refresh_token", "id_token", "token", "auth_token", "api_key", "api-key", "apikey",
      "client_secret", "client_assertion", "secret", "password", "passwd", "pwd", "jwt", "signature",
      "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential");

  /** A servlet container's session id in a path segment ({@code ;jsessionid=}). */
  private static final String JSESSIONID = "jsessionid";

  /** The protocol's own header: a key is not a credential, and a resend needs it. */
  private static final String IDEMPOTENCY_KEY = "idempotency-key";
  /**
   * The ending that makes a name a secret ({@link #isSecretByDefault(String)}), read after
   * {@code _} and {@code .} become {@code -}: {@code Ocp-Apim-Subscription-Key},
   * {@code x-functions-key}, {@code DD-APPLICATION-KEY}, {@code X-Master-Key} are each the whole
   * credential of their API. An ending, not a fragment: {@code X-Keyword}, {@code monkey} are not.
   */
  private static final String KEY_SUFFIX = "-key";
  /** What {@link HeaderMaps#normalize} makes of no headers, made once. */
  private static final Map<String, List<String>> NO_HEADERS = HeaderMaps.normalize(Map.of());
  /** The body of a snapshot without one: shared, since a body array is never written to. */
  private static final byte[] NO_BODY = new byte[0];

  /**
   * The default rule for secret names: the exact names of {@link #DEFAULT_SECRET_HEADERS}, plus any
   * name that contains one of {@link #DEFAULT_SECRET_NAME_PARTS} (so {@code X-Api-Key},
   * {@code api_key}, {@code X-Auth-Token}, {@code X-Session-Id}, {@code password}, {@code pwd},
   * {@code X-JWT-Assertion}...), plus any
   * name that is {@code key} or ends in {@code -key} (or {@code _key}, {@code .key}: so
   * {@code Ocp-Apim-Subscription-Key}, {@code x-functions-key}, {@code DD-APPLICATION-KEY},
   * {@code X-Master-Key}, {@code access_key}). An idempotency key header is exempt:
   * {@code Idempotency-Key}, and any name ending in {@code -idempotency-key}
   * ({@code X-Idempotency-Key}, {@code Cko-Idempotency-Key}) is the key, not a credential. (The
   * adapters never put their key header, whatever its name, into a snapshot: each attempt, a resume
   * included, sends the journaled key in it.) Pure and thread-safe.
   *
   * @param name a header or query parameter name, any case
   * @return true if the default rule treats it as a secret
   * @throws NullPointerException if name is null
   */
  public static boolean isSecretByDefault(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    if (n.equals(IDEMPOTENCY_KEY)) {
      return false;
    }
    if (DEFAULT_SECRET_HEADERS.contains(n)) {
      return true;
    }
    String dashed = n.replace('_', '-').replace('.', '-');
    for (String part : DEFAULT_SECRET_NAME_PARTS) {
      if (dashed.contains(part)) {
        return true;
      }
    }
    return isKeyNamed(dashed);
  }

  /**
   * Whether a name (lower case, {@code _} and {@code .} read as {@code -}) is {@code key} or ends in
   * {@code -key}, other than an idempotency key's name.
   */
  private static boolean isKeyNamed(String dashed) {
    if (dashed.equals("key")) {
      return true;
    }
    return dashed.endsWith(KEY_SUFFIX) && !dashed.equals(IDEMPOTENCY_KEY)
        && !dashed.endsWith("-" + IDEMPOTENCY_KEY);
  }

  /**
   * The default rule for query parameter names: {@link #isSecretByDefault(String)}, plus the exact
   * names of {@link #DEFAULT_SECRET_QUERY_PARAMETERS} ({@code sig}, {@code key}), any case. The
   * executor refuses a request URI with such a parameter (it is sent and journaled as it is; see
   * {@code IdempotentExecutor.Builder#allowQueryParameters}), and redacts its value in a stored
   * {@code Location}. Path parameters have a rule of their own
   * ({@link #isSecretPathParameterByDefault(String)}). Pure and thread-safe.
   *
   * @param name a query parameter name, decoded, any case
   * @return true if the default rule treats it as a secret
   * @throws NullPointerException if name is null
   */
  public static boolean isSecretQueryParameterByDefault(String name) {
    return DEFAULT_SECRET_QUERY_PARAMETERS.contains(name.toLowerCase(Locale.ROOT)) || isSecretByDefault(name);
  }

  /**
   * The default rule for path parameter names ({@code /cart;jsessionid=...}): exact names only,
   * any case: {@code jsessionid} (a servlet container's session id) and the names of
   * {@link #DEFAULT_SECRET_QUERY_PARAMETERS} ({@code sig}, {@code key}). Not the substring rule of
   * {@link #isSecretByDefault(String)}: path parameters are JAX-RS matrix parameters too
   * ({@code ;author=tolkien}, {@code ;session=2}), which were never refused before the rule read
   * the path, and would then be ({@code author} contains {@code auth}). The executor refuses a
   * request URI with such a parameter, and redacts its value in a stored {@code Location} and in
   * {@link #redactedUri(URI)}. Pure and thread-safe.
   *
   * @param name a path parameter name, decoded, any case
   * @return true if the default rule treats it as a secret
   * @throws NullPointerException if name is null
   */
  public static boolean isSecretPathParameterByDefault(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    return n.equals(JSESSIONID) || DEFAULT_SECRET_QUERY_PARAMETERS.contains(n);
  }

  /**
   * The default rule for the parameter names of a URL nested in a query parameter's value (its
   * query, and its fragment's pairs): exact names only, any case: those
   * {@link #isSecretPathParameterByDefault(String)} names ({@code jsessionid}, {@code sig},
   * {@code key}) and well-known credential parameters ({@code access_token}, {@code refresh_token},
   * {@code id_token}, {@code token}, {@code api_key}, {@code apikey}, {@code client_secret}, {@code jwt},
   * {@code secret}, {@code password}, {@code signature}, {@code X-Amz-Signature}...). Not the
   * substring rule of {@link #isSecretQueryParameterByDefault(String)}: a return URL's
   * {@code ?author=}, {@code ?oauth_provider=} or Stripe's {@code ?session_id={CHECKOUT_SESSION_ID}}
   * is no credential. The executor refuses a request URI whose nested URL has such a parameter, and
   * redacts the whole value holding it in a stored {@code Location}. Pure and thread-safe.
   *
   * @param name a nested URL's parameter name, decoded, any case
   * @return true if the default rule treats it as a secret
   * @throws NullPointerException if name is null
   */
  public static boolean isSecretNestedQueryParameterByDefault(String name) {
    return isSecretPathParameterByDefault(name) || NESTED_SECRET_QUERY_PARAMETERS.contains(name.toLowerCase(Locale.ROOT));
  }

  /**
   * A URI as Idem's messages and logs show it: scheme, host, port and path, never user info, query
   * or fragment, any of which may carry a credential, and with the value of each path parameter
   * that {@link #isSecretPathParameterByDefault(String)} names (a servlet's {@code ;jsessionid=})
   * replaced by {@code redacted}. The host is read from the authority even
   * where {@link URI#getHost()} gives none (a host with an underscore, such as {@code payments_api},
   * makes {@code URI} read the authority as registry-based). Adapters name requests this way in
   * their exceptions. Pure and thread-safe.
   *
   * @param uri any URI, relative or absolute
   * @return for example {@code https://api.example.com:8443/v1/orders}; an opaque URI shows only
   *     its scheme
   * @throws NullPointerException if uri is null
   */
  public static String redactedUri(URI uri) {
    return UriAuthority.redacted(Objects.requireNonNull(uri, "uri"));
  }

  /**
   * A URL (absolute or relative, as a {@code Location} header holds one) as it may be stored: its
   * user info, the value of each credential its path or query holds (by the rules
   * {@link #redactedQuery} applies), and its fragment (which no rule can read, and which a stored
   * URL never needs) replaced by {@code redacted}; everything else as written. The executor keeps
   * the URLs of the responses it journals this way, and the server guard those it stores (see
   * {@link #redactedHeaderValue} for the headers that carry them). Linear in the URL's length;
   * pure and thread-safe.
   *
   * @param url a URL as sent or received, raw (encoded)
   * @return {@code url} itself where nothing in it holds a credential and it has no fragment
   * @throws NullPointerException if url is null
   */
  public static String redactedUrl(String url) {
    return UrlCredentials.defaults().redact(Objects.requireNonNull(url, "url"));
  }

  /**
   * A response header's value as it may be stored: for {@code Location} and
   * {@code Content-Location} the URL {@linkplain #redactedUrl redacted}; for {@code Link} (RFC 8288)
   * every target between {@code <} and {@code >}, every {@code anchor} parameter and every URL of a
   * preload's {@code imagesrcset}, for {@code Refresh} the URL after the delay, and for
   * {@code Referer} its URL, redacted the
   * same way (such as a next-page link with a token in its query, or a pre-signed download link);
   * the header name in any case; any other header's value as it is. The executor keeps the
   * responses it journals this way; the server guard the headers it stores. Linear in the value's
   * length; pure and thread-safe.
   *
   * @param name the header's name, any case
   * @param value its value, raw, as received
   * @return {@code value} itself where nothing in it is redacted
   * @throws NullPointerException if name or value is null
   */
  public static String redactedHeaderValue(String name, String value) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
    return UrlHeaders.redact(name, value, UrlCredentials.defaults());
  }

  /**
   * A raw query as a stored request may be shown: every parameter as written and in order, with
   * the value of each that holds a credential replaced by {@code redacted}, its name kept. A value
   * holds one if its parameter's name is one {@link #isSecretQueryParameterByDefault(String)}
   * names, or if it is a URL (or a percent-encoded one) that carries user info, a path parameter
   * {@link #isSecretPathParameterByDefault(String)} names, or a query parameter
   * {@link #isSecretNestedQueryParameterByDefault(String)} names. The executor applies the same
   * rule, with the app's allowances, before it journals a request (and refuses to send one it
   * cannot journal without a credential); this is for showing what another tool, or an older
   * version of Idem whose rule knew fewer names, has stored. Linear in the query's length; pure
   * and thread-safe.
   *
   * @param rawQuery a raw (encoded) query, without its {@code ?}
   * @return {@code rawQuery} itself where nothing in it holds a credential
   * @throws NullPointerException if rawQuery is null
   */
  public static String redactedQuery(String rawQuery) {
    Objects.requireNonNull(rawQuery, "rawQuery");
    // One rule, one walk: the executor's own (UrlCredentials), read on the query alone.
    String redacted = UrlCredentials.defaults().redact("?" + rawQuery);
    return redacted.substring(1);
  }

  static {
    SnapshotAccess.install(new SnapshotAccess() {
      @Override
      public byte[] body(RequestSnapshot request) {
        return request.body;
      }

      @Override
      public byte[] body(ResponseSnapshot response) {
        return response.sharedBody();
      }

      @Override
      public String contentType(RequestSnapshot request) {
        return request.contentType;
      }
    });
  }

  private final String method;
  private final URI uri;
  private final Map<String, List<String>> headers;
  private final byte[] body;
  private final String contentType;
  private final Duration timeout;

  private RequestSnapshot(Builder b) {
    this.method = b.method;
    this.uri = b.uri;
    this.headers = b.headers.isEmpty() ? NO_HEADERS : HeaderMaps.normalize(b.headers);
    // The builder's array is its own copy and is only ever replaced, never written to, so sharing
    // it is safe: a second copy per snapshot bought nothing.
    this.body = b.body;
    this.contentType = b.contentType;
    this.timeout = b.timeout;
  }

  /**
   * Starts a snapshot of a request.
   *
   * @param method the HTTP method, such as {@code POST}; upper-cased
   * @param uri the absolute request URI
   * @return a builder
   */
  public static Builder builder(String method, URI uri) {
    return new Builder(method, uri);
  }

  /**
   * Returns a builder primed with this snapshot's contents.
   *
   * @return a new builder holding this snapshot's method, URI, headers, body and timeout; this snapshot is
   *     not changed
   */
  public Builder toBuilder() {
    Builder b = new Builder(method, uri).body(body, contentType);
    b.timeout = timeout;
    headers.forEach((k, v) -> v.forEach(value -> b.header(k, value)));
    return b;
  }

  /**
   * The HTTP method, upper case.
   *
   * @return the method, such as {@code POST}
   */
  public String method() {
    return method;
  }

  /**
   * The absolute request URI.
   *
   * @return the URI, scheme and host included
   */
  public URI uri() {
    return uri;
  }

  /**
   * Headers by lower-case name, sorted; unmodifiable.
   *
   * @return the headers; every name maps to its values in the order they were added
   */
  public Map<String, List<String>> headers() {
    return headers;
  }

  /**
   * The first value of a header, by case-insensitive name.
   *
   * @param name the header name, any case
   * @return the first value, or empty if the header is absent
   */
  public Optional<String> header(String name) {
    return HeaderMaps.first(headers, name);
  }

  /**
   * A copy of the body bytes; empty for a request without a body.
   *
   * @return a new array on every call; changing it does not change the snapshot
   */
  public byte[] body() {
    return body.clone();
  }

  /**
   * The body length in bytes, without copying it.
   *
   * @return the number of body bytes, 0 for no body
   */
  public int bodyLength() {
    return body.length;
  }

  /**
   * The body's media type, such as {@code application/json}, if known.
   *
   * @return the media type, or empty if none was given
   */
  public Optional<String> contentType() {
    return Optional.ofNullable(contentType);
  }

  /**
   * The request's own response timeout, as the app set it on the request it sent or queued (for
   * example {@code HttpRequest.Builder.timeout} in java.net.http). Transports that re-send a
   * journaled snapshot bound each attempt by it, as the live call would have. Not a secret, and
   * not part of the request's fingerprint: the same request with another timeout is the same
   * operation.
   *
   * @return the timeout, or empty if the request had none (and for snapshots journaled before
   *     timeouts were kept)
   */
  public Optional<Duration> timeout() {
    return Optional.ofNullable(timeout);
  }

  /**
   * Returns a copy without the named headers (case-insensitive).
   *
   * @param names header names to drop
   * @return this snapshot if none of them is present, else a copy without them
   */
  public RequestSnapshot withoutHeaders(Collection<String> names) {
    Objects.requireNonNull(names, "names");
    if (headers.isEmpty() || names.isEmpty()) {
      return this;
    }
    Set<String> lower = new HashSet<>();
    for (String n : names) {
      lower.add(n.toLowerCase(Locale.ROOT));
    }
    boolean any = false;
    for (String k : headers.keySet()) {
      if (lower.contains(k)) {
        any = true;
        break;
      }
    }
    if (!any) {
      return this;
    }
    // The builder takes the body as it is: this snapshot's array is never written to either.
    Builder b = new Builder(method, uri);
    b.body = body;
    b.contentType = contentType;
    b.timeout = timeout;
    headers.forEach((k, v) -> {
      if (!lower.contains(k)) {
        v.forEach(value -> b.header(k, value));
      }
    });
    return b.build();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RequestSnapshot s && method.equals(s.method) && uri.equals(s.uri)
        && headers.equals(s.headers) && Arrays.equals(body, s.body) && Objects.equals(contentType, s.contentType)
        && Objects.equals(timeout, s.timeout);
  }

  @Override
  public int hashCode() {
    return Objects.hash(method, uri, headers, Arrays.hashCode(body), contentType, timeout);
  }

  /**
   * Method, {@linkplain #redactedUri redacted} URI and body size only: never header values, the
   * body, or the URI's user info, query and fragment, which may be sensitive.
   */
  @Override
  public String toString() {
    return method + " " + redactedUri(uri) + " (" + body.length + " body bytes)";
  }

  /** Builds a {@link RequestSnapshot}. Not thread-safe. */
  public static final class Builder {
    private final String method;
    private final URI uri;
    private final Map<String, List<String>> headers = new TreeMap<>();
    private byte[] body = NO_BODY;
    private String contentType;
    private Duration timeout;

    private Builder(String method, URI uri) {
      Objects.requireNonNull(method, "method");
      Objects.requireNonNull(uri, "uri");
      if (method.isBlank()) {
        throw new IllegalArgumentException("method must not be blank");
      }
      if (!uri.isAbsolute()) {
        throw new IllegalArgumentException("request URI must be absolute: " + redactedUri(uri));
      }
      this.method = method.toUpperCase(Locale.ROOT);
      this.uri = uri;
    }

    /**
     * Adds one header value; the name is stored in lower case.
     *
     * @param name the header name, any case
     * @param value the value; added after any earlier values of the same header
     * @throws NullPointerException if {@code name} or {@code value} is null
     * @return this builder
     */
    public Builder header(String name, String value) {
      Objects.requireNonNull(name, "header name");
      Objects.requireNonNull(value, "header value");
      headers.computeIfAbsent(name.toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(value);
      return this;
    }

    /**
     * Sets the body bytes (copied) and their media type, which may be null.
     *
     * @param bytes the body; empty for none (the default)
     * @param mediaType the media type, such as {@code application/json}, or null if unknown
     * @throws NullPointerException if {@code bytes} is null
     * @return this builder
     */
    public Builder body(byte[] bytes, String mediaType) {
      this.body = Objects.requireNonNull(bytes, "body").clone();
      this.contentType = mediaType;
      return this;
    }

    /**
     * Sets the request's own response timeout (see {@link RequestSnapshot#timeout()}).
     *
     * @param timeout a positive duration, or null for none (the default)
     * @return this builder
     * @throws IllegalArgumentException if {@code timeout} is zero or negative
     */
    public Builder timeout(Duration timeout) {
      if (timeout != null && (timeout.isZero() || timeout.isNegative())) {
        throw new IllegalArgumentException("timeout must be positive: " + timeout);
      }
      this.timeout = timeout;
      return this;
    }

    /**
     * Builds the immutable snapshot.
     *
     * @return a new snapshot; the builder may go on being changed without affecting it
     */
    public RequestSnapshot build() {
      return new RequestSnapshot(this);
    }
  }
}
