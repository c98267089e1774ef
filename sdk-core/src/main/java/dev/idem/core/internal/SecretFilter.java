package dev.idem.core.internal;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides what of a request, and of a response, may be journaled. From a request it drops secret
 * headers and the URI's fragment, and it refuses a request whose URI carries user info, a
 * secret-looking query or path parameter, or a URL nested in a query parameter's value that
 * carries one of these ({@link UrlCredentials}): the path and query are part of the request on the
 * wire, journaled whole, and the journaled URI is what a resume sends, so they cannot be stripped
 * without changing the request (see {@code IdempotentExecutor.Builder#allowQueryParameters}). From
 * a response it drops secret headers and redacts credentials in a stored URL: a response is only
 * kept, never sent again, so its copy in the journal can lose what the caller's copy has.
 *
 * <p><b>Why the fragment is dropped rather than checked like the query.</b> An HTTP client never
 * sends a fragment, so the URI without it is exactly what goes on the wire and what a resume must
 * send again: dropping it loses nothing, where dropping a query parameter would journal another
 * request. And a fragment has no grammar that a name rule could read: OAuth's implicit flow puts
 * {@code #access_token=...} there, but an app may as well put a bare token or a route
 * ({@code #/callback?token=...}), which a check of {@code name=value} pairs would let through.
 * Dropping every fragment keeps all of them out of the journal, the CLI's {@code show} and the
 * logs, and refuses no request that could be sent faithfully. The fingerprint never read the
 * fragment, so a request's fingerprint is the same with or without it. A stored
 * {@code Location}'s fragment is replaced whole for the same reason (a bare {@code #token} would
 * pass a pair check); kept as {@code #redacted}, it still shows that there was one.
 *
 * <p>User info is refused rather than dropped, although no client sends it either: an app that
 * put a credential there expects it to authenticate the call, and dropping it silently would hide
 * that it never does. It is found even when {@link java.net.URI} reads the authority as
 * registry-based (a host with an underscore), through {@link UriAuthority}.
 *
 * <p>Immutable and thread-safe.
 */
public final class SecretFilter {
  private static final Logger LOG = LoggerFactory.getLogger(SecretFilter.class);
  private static final String FORM = "application/x-www-form-urlencoded";

  /**
   * The common header names ({@link HeaderMaps}' fixed table: {@code content-type}, {@code date},
   * {@code idempotency-key}...) that the default rule does not name, found by that rule itself
   * once. Every name of every journaled request and response goes through {@link #isSecretHeader},
   * and most are these: a set lookup answers what the rule's fourteen substring scans would (a
   * profile of one in-memory call put the rule at a tenth of Idem's own work).
   */
  private static final Set<String> COMMON_NOT_SECRET = HeaderMaps.commonLowerCaseNames().stream()
      .filter(n -> !RequestSnapshot.isSecretByDefault(n))
      .collect(Collectors.toUnmodifiableSet());
  private final Set<String> added;
  private final Set<String> allowedHeaders;
  private final UrlCredentials urls;

  /**
   * @param added header names (any case) that are secrets besides the default rule
   * @param allowedHeaders header names (any case) the app explicitly allows to be journaled; the
   *     exact names of {@link RequestSnapshot#DEFAULT_SECRET_HEADERS} among them are ignored, with a
   *     warning
   * @param allowedQuery query parameter names (any case, matched ignoring it, as the rule matches)
   *     the app explicitly allows in journaled URIs
   */
  public SecretFilter(Set<String> added, Set<String> allowedHeaders, Set<String> allowedQuery) {
    this.added = lower(added);
    this.allowedHeaders = withoutAlwaysSecret(lower(allowedHeaders));
    this.urls = new UrlCredentials(allowedQuery);
  }

  /**
   * The allowed names less Authorization, Proxy-Authorization, DPoP, Cookie and Set-Cookie, which no
   * journal the executor writes to may keep, the in-memory one included. Taken out here, once, so
   * that the per-header test costs nothing more than before.
   */
  private static Set<String> withoutAlwaysSecret(Set<String> allowed) {
    Set<String> ignored = new TreeSet<>(allowed);
    ignored.retainAll(RequestSnapshot.DEFAULT_SECRET_HEADERS);
    if (ignored.isEmpty()) {
      return allowed;
    }
    LOG.warn("allowHeaders({}) ignored: Authorization, Proxy-Authorization, DPoP, Cookie and Set-Cookie are never"
        + " journaled; the app's transport re-applies them on a resume", ignored);
    return allowed.stream().filter(n -> !ignored.contains(n)).collect(Collectors.toUnmodifiableSet());
  }

  private static Set<String> lower(Set<String> names) {
    return names.stream().map(n -> n.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
  }

  /** Whether a header (any case) is kept out of the journal. */
  public boolean isSecretHeader(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    if (added.contains(n)) {
      return true;
    }
    if (COMMON_NOT_SECRET.contains(n)) {
      return false;
    }
    return !allowedHeaders.contains(n) && RequestSnapshot.isSecretByDefault(n);
  }

  /**
   * The snapshot to journal: {@code request} without its secret headers, without a header that
   * carries a URL with a credential in it, and without its URI's fragment (see the class comment).
   *
   * <p>A {@code Referer}, {@code Location}, {@code Content-Location}, {@code Link} or
   * {@code Refresh} ({@link UrlHeaders}) is left out whole when a stored response's copy of it would
   * have anything redacted (user info, a parameter the query or path rule names, a URL nested in a
   * query value that carries one, a fragment): an app that sends {@code Referer:
   * https://app.example/cb?access_token=...} would otherwise have the token journaled in clear.
   * Left out, not redacted: what is journaled is what a resume sends, and a resume is better
   * without the header (which the app's transport can add again, as it adds {@code Authorization})
   * than with a URL the app never sent. Not refused, unlike such a URI: the header is not the
   * request's identity, and these headers are informational to the servers Idem calls. The app
   * keeps such a header in clear by naming it in {@code allowHeaders}, or a parameter in
   * {@code allowQueryParameters}.
   *
   * @return {@code request} itself if it has none of these, as most requests do
   */
  public RequestSnapshot persistable(RequestSnapshot request) {
    List<String> drop = null; // made only for a request that has a secret: most have none
    Map<String, List<String>> headers = request.headers();
    for (String h : headers.keySet()) {
      if (isSecretHeader(h) || carriesUrlCredential(h, headers)) {
        if (drop == null) {
          drop = new ArrayList<>();
        }
        drop.add(h);
      }
    }
    RequestSnapshot kept = drop == null ? request : request.withoutHeaders(drop);
    URI uri = kept.uri();
    URI sent = UriAuthority.withoutFragment(uri);
    return sent == uri ? kept : withUri(kept, sent);
  }

  /**
   * Whether a request header that carries URLs ({@link UrlHeaders}) holds one with anything a
   * stored copy would redact, and the app did not allow the header by name.
   */
  private boolean carriesUrlCredential(String name, Map<String, List<String>> headers) {
    // The name first: most requests carry none of these headers, and then nothing more is looked up.
    if (!UrlHeaders.carriesUrls(name) || allowedHeaders.contains(name.toLowerCase(Locale.ROOT))) {
      return false;
    }
    List<String> values = headers.get(name);
    for (int i = 0; i < values.size(); i++) {
      String value = values.get(i);
      if (UrlHeaders.redact(name, value, urls) != value) {
        return true;
      }
    }
    return false;
  }

  private static RequestSnapshot withUri(RequestSnapshot request, URI uri) {
    RequestSnapshot.Builder b = RequestSnapshot.builder(request.method(), uri)
        .body(request.body(), request.contentType().orElse(null))
        .timeout(request.timeout().orElse(null));
    request.headers().forEach((name, values) -> values.forEach(v -> b.header(name, v)));
    return b.build();
  }

  /**
   * The response to journal: {@code response} without the headers {@link #isSecretHeader} names.
   * The caller keeps the response it was given; only the journal's copy lacks them, so an outcome
   * read back from the journal (a repeated call, a resume, after a restart) lacks them too.
   *
   * <p>{@code Location}, {@code Content-Location}, and the URLs in {@code Link} and {@code Refresh}
   * ({@link UrlHeaders}; only these: reading every header value as a possible URL would cost every
   * response a parse for a rare case) are kept, with their credentials replaced by
   * {@value UrlCredentials#REDACTED} ({@link UrlCredentials#redact}): any user info, the value of
   * every query parameter that {@link #isSecretQueryParameter} names (a pre-signed URL's
   * {@code X-Amz-Signature}, an Azure SAS's {@code sig}, an {@code access_token}) and of every path
   * parameter that {@link RequestSnapshot#isSecretPathParameterByDefault} names (a
   * {@code ;jsessionid}), the whole value of a parameter holding a nested URL that carries one, and
   * the whole fragment: the URL still tells where the result is, without the credential to fetch it.
   *
   * @param response a response, or null
   * @return {@code response} itself when it has nothing to leave out (most: then nothing is
   *     allocated), else a copy without it; null for null
   */
  public ResponseSnapshot persistable(ResponseSnapshot response) {
    if (response == null) {
      return null;
    }
    Map<String, List<String>> headers = response.headers();
    // Walks the names only (a key set iterator, no entry objects) up to the first header that needs
    // leaving out or redacting, since this runs for every response the executor journals and most
    // have nothing to hide; that header's redacted URLs are kept, so no URL is walked twice.
    String first = null;
    List<String> firstKept = null;
    for (String name : headers.keySet()) {
      if (isSecretHeader(name)) {
        first = name;
        break;
      }
      if (UrlHeaders.carriesUrls(name)) {
        List<String> values = headers.get(name);
        List<String> redacted = redactUrls(name, values);
        if (redacted != values) {
          first = name;
          firstKept = redacted;
          break;
        }
      }
    }
    if (first == null) {
      return response;
    }
    Map<String, List<String>> kept = new LinkedHashMap<>();
    boolean before = true;
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      String name = e.getKey();
      if (before && !name.equals(first)) {
        kept.put(name, e.getValue()); // already found to need nothing
        continue;
      }
      if (before) {
        before = false;
        if (firstKept != null) {
          kept.put(name, firstKept);
        }
      } else if (!isSecretHeader(name)) {
        kept.put(name, UrlHeaders.carriesUrls(name) ? redactUrls(name, e.getValue()) : e.getValue());
      }
    }
    return new ResponseSnapshot(response.status(), kept, response.body());
  }

  /**
   * {@code t} with its response made {@link #persistable(ResponseSnapshot) persistable}: every
   * transition the executor hands a journal goes through here.
   *
   * @return {@code t} itself when its response (if any) has nothing to leave out
   */
  public Transition persistable(Transition t) {
    ResponseSnapshot kept = persistable(t.response());
    return kept == t.response() ? t : new Transition(t.target(), t.at(), t.nextAttemptAt(), kept, t.reason());
  }

  /**
   * {@code values} of the header {@code name} itself if no URL among them has a credential, else a
   * list with them redacted ({@link UrlHeaders}).
   */
  private List<String> redactUrls(String name, List<String> values) {
    List<String> out = null;
    for (int i = 0; i < values.size(); i++) { // by index: no iterator for the usual single value
      String value = values.get(i);
      String redacted = UrlHeaders.redact(name, value, urls);
      if (out == null && redacted != value) {
        out = new ArrayList<>(values.subList(0, i));
      }
      if (out != null) {
        out.add(redacted);
      }
    }
    return out == null ? values : out;
  }

  /**
   * {@code url} with its credentials redacted ({@link UrlCredentials#redact}); {@code url} itself
   * when it has none.
   */
  String redactUrl(String url) {
    return urls.redact(url);
  }

  /**
   * Whether a query parameter (its decoded name, any case) holds a credential: the default
   * rule ({@link RequestSnapshot#isSecretQueryParameterByDefault}) names it and the app did not
   * allow it (in any case). The rule {@link #checkUri} refuses a request URI by, and the
   * one a stored response's URL is redacted by.
   */
  public boolean isSecretQueryParameter(String name) {
    return urls.isSecretName(name);
  }

  /**
   * Refuses a URI that carries a credential the journal would keep in clear: user info
   * ({@code https://user:password@host/}, also before a host that {@link URI} reads as
   * registry-based, such as {@code payments_api}), a query parameter with a secret-looking name
   * ({@code ?sig=}) or a path parameter the path rule names ({@code ;jsessionid=}) that the app did
   * not allow, or a URL nested in the
   * value of a query parameter the app did not allow that carries any of these
   * ({@code ?next=https://user:pw@host/}, encoded or not). The fragment is not checked:
   * {@link #persistable} drops it.
   *
   * @throws IllegalArgumentException naming the parameter (never its value, nor the user info) and
   *     the way out
   */
  public void checkUri(URI uri, String operation) {
    if (UriAuthority.hasUserInfo(uri)) {
      // HTTP clients do not send it, but the journal, its listings and the logs would keep it.
      throw new IllegalArgumentException("operation " + operation + ": the request URI carries user info (a"
          + " credential, such as user:password@), which would be journaled in clear with the URI; nothing was"
          + " journaled or sent. Send the credential in a header that the app's transport adds on every attempt"
          + " (an Authorization header is never journaled)");
    }
    UrlCredentials.Finding found = urls.findInPath(uri.getRawPath());
    if (found == null) {
      found = urls.findInQuery(uri.getRawQuery());
    }
    if (found == null) {
      return;
    }
    if (found.kind() == UrlCredentials.Finding.Kind.NESTED_TOO_DEEP_IN_QUERY_PARAMETER) {
      // Not a finding: the walk stops reading there, to stay linear, so it cannot vouch for it.
      throw new IllegalArgumentException("operation " + operation + ": query parameter '" + found.name() + "'"
          + " holds URLs too deeply nested to check for a credential (more than " + UrlCredentials.MAX_NESTING
          + " levels, each a URL in a query value of the one above), and the request URI (path and query"
          + " included) would be journaled in clear; nothing was journaled or sent. If its value holds no"
          + " credential, allow it with IdempotentExecutor.builder().allowQueryParameters(Set.of(\""
          + found.name() + "\")): it is then journaled and sent as given, without being read");
    }
    String what = switch (found.kind()) {
      case PATH_PARAMETER -> "path parameter '" + found.name() + "' looks like a credential";
      case NESTED_IN_QUERY_PARAMETER -> "query parameter '" + found.name() + "' holds a URL that carries a"
          + " credential (user info, or a parameter the secret rule names)";
      default -> "query parameter '" + found.name() + "' looks like a credential";
    };
    throw new IllegalArgumentException("operation " + operation + ": " + what + ", and the request URI (path"
        + " and query included) would be journaled in clear; nothing was journaled or sent. Send it in a header"
        + " that the app's transport adds on every attempt, or allow it with"
        + " IdempotentExecutor.builder().allowQueryParameters(Set.of(\"" + found.name() + "\"))");
  }
  /**
   * The first credential in a form body ({@code application/x-www-form-urlencoded}, any case,
   * parameters ignored): a field whose exact name holds one ({@code client_secret=},
   * {@code password=}, {@code refresh_token=}: the names of a URL nested in a query,
   * {@link RequestSnapshot#isSecretNestedQueryParameterByDefault}), or a URL in a value carrying
   * one, with the allowances {@link #checkUri} reads the query by. Exact names, not the query's
   * substring rule: a payment API's form body (Stripe's) names fields freely
   * ({@code metadata[author]}, {@code metadata[session_id]}), and those must not be refused. Null
   * for any other body, or a form body without one.
   */
  public UrlCredentials.Finding findInFormBody(String contentType, byte[] body) {
    if (body == null || body.length == 0 || contentType == null || !isForm(contentType)) {
      return null;
    }
    // ISO-8859-1 maps each byte to one char: the walk reads names and percent escapes, which are
    // ASCII, and decodes escapes as UTF-8 itself; no byte sequence can fail to decode.
    return urls.findInFormFields(new String(body, StandardCharsets.ISO_8859_1));
  }

  /**
   * Refuses a request whose form body holds a field the query's rule names a credential
   * ({@link #findInFormBody(String, byte[])}): journaled whole, the body would keep it in clear, and a journaled
   * body is what a resume sends, so it cannot be rewritten either.
   *
   * @throws IllegalArgumentException naming the field (never its value) and the way out
   */
  public void checkFormBody(RequestSnapshot request, String operation) {
    // Runs on every keyed call: no copy, Optional or substring for a body that is not a form.
    String contentType = SnapshotAccess.get().contentType(request);
    if (request.bodyLength() == 0 || contentType == null || !isForm(contentType)) {
      return;
    }
    UrlCredentials.Finding found = findInFormBody(contentType, SnapshotAccess.get().body(request));
    if (found == null) {
      return;
    }
    String what = found.kind() == UrlCredentials.Finding.Kind.QUERY_PARAMETER
        ? "looks like a credential" : "holds a URL that carries a credential, or one too deeply nested to check";
    throw new IllegalArgumentException("operation " + operation + ": form body field '" + found.name() + "' "
        + what + ", and the request body would be journaled in clear; nothing was journaled or sent. Send it in a"
        + " header that the app's transport adds on every attempt (an OAuth client's client_secret_basic"
        + " Authorization, for one), send the request untagged (it then goes out unjournaled), or allow it with"
        + " IdempotentExecutor.builder().allowQueryParameters(Set.of(\"" + found.name() + "\"))");
  }

  /** Whether a Content-Type is {@code application/x-www-form-urlencoded}, whatever its parameters. */
  private static boolean isForm(String contentType) {
    // What trim() then equalsIgnoreCase said of the part before any ';', without the substrings.
    int end = contentType.indexOf(';');
    if (end < 0) {
      end = contentType.length();
    }
    int start = 0;
    while (start < end && contentType.charAt(start) <= ' ') {
      start++;
    }
    while (end > start && contentType.charAt(end - 1) <= ' ') {
      end--;
    }
    return end - start == FORM.length() && contentType.regionMatches(true, start, FORM, 0, FORM.length());
  }
}
