package dev.idem.okhttp.internal;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import okhttp3.Headers;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Conversions between OkHttp's requests and responses and the core's snapshots. Stateless. */
public final class OkHttpSnapshots {
  private static final Logger LOG = LoggerFactory.getLogger(OkHttpSnapshots.class);

  private OkHttpSnapshots() {}

  /**
   * Snapshots a request whose body was read into {@code body}, leaving out the key header (the
   * transport sets it on every attempt from the journaled key, so it is not part of the request).
   * {@code type} is the type of the body that wrote those bytes, which is not always the request's
   * own (a multipart body gets a boundary derived from its content, see {@link ContentBoundary}).
   */
  public static RequestSnapshot snapshot(Request request, byte[] body, MediaType type, String keyHeader) {
    RequestSnapshot.Builder b = RequestSnapshot.builder(request.method(), uriOf(request.url()));
    Headers headers = request.headers();
    for (int i = 0; i < headers.size(); i++) {
      if (!headers.name(i).equalsIgnoreCase(keyHeader)) {
        b.header(headers.name(i), headers.value(i));
      }
    }
    if (body != null) {
      b.body(body, type == null ? null : type.toString());
    }
    return b.build();
  }

  /**
   * {@link HttpUrl#uri()}, without its cost for the common URL. {@code uri()} re-encodes the URL
   * for {@link URI} (a new builder, a regex compiled per call for the host, each path segment and
   * query part canonicalized again) and was most of a request snapshot's CPU. A URL whose text
   * holds only characters that re-encoding leaves alone (ASCII letters, digits, the
   * {@code -._~:/?=&+,;@!$'()*} marks, and valid percent escapes; no fragment, no IPv6 brackets)
   * comes out of it unchanged, so for those the text is parsed as it is; any other URL goes
   * through {@code uri()}.
   */
  static URI uriOf(HttpUrl url) {
    String text = url.toString();
    // Most calls of a thread go to the URL of its previous call: parsing it again buys nothing (a
    // URI is immutable, and equal text gives an equal URI).
    URI[] last = LAST_URI.get();
    if (last[0] != null && last[0].toString().equals(text)) {
      return last[0];
    }
    URI uri = null;
    if (reencodesToItself(text)) {
      try {
        uri = new URI(text);
      } catch (URISyntaxException e) {
        // Not expected for these characters; uri() decides.
      }
    }
    if (uri == null) {
      return url.uri();
    }
    last[0] = uri;
    return uri;
  }

  /** The last plain URL's URI on this thread: one entry, so bounded. */
  private static final ThreadLocal<URI[]> LAST_URI = ThreadLocal.withInitial(() -> new URI[1]);

  private static boolean reencodesToItself(String s) {
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
        continue;
      }
      if (c == '%') {
        if (i + 2 >= n || !isHex(s.charAt(i + 1)) || !isHex(s.charAt(i + 2))) {
          return false;
        }
        i += 2;
        continue;
      }
      if ("-._~:/?=&+,;@!$'()*".indexOf(c) < 0) {
        return false;
      }
    }
    return true;
  }

  private static boolean isHex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  /**
   * Rebuilds a request from a journaled snapshot, for a resume. Secret headers are not in it: the
   * app's own interceptors add them on the way out.
   *
   * @throws IllegalArgumentException if OkHttp cannot carry the snapshot (a URI it does not take, a
   *     header name it refuses, a body on a method that must not have one); nothing was sent
   */
  public static Request toRequest(RequestSnapshot snapshot) {
    LastParsed last = LAST_PARSED.get();
    // addUnsafeNonAscii, as toResponse: OkHttp lets an app send a non-ASCII value (its
    // Headers.Builder.addUnsafeNonAscii), the live attempt sent it and the journal kept it, so
    // every later attempt must be able to send it too (Request.Builder.addHeader refuses it).
    Headers.Builder headers = new Headers.Builder();
    snapshot.headers().forEach((name, values) -> values.forEach(v -> headers.addUnsafeNonAscii(name, v)));
    Request.Builder b = new Request.Builder().url(last.url(snapshot.uri())).headers(headers.build());
    RequestBody body = null;
    if (snapshot.bodyLength() > 0 || needsBody(snapshot.method())) {
      MediaType type = snapshot.contentType().map(last::mediaType).orElse(null);
      body = RequestBody.create(snapshot.body(), type);
    }
    return b.method(snapshot.method(), body).build();
  }

  /**
   * The last URL and media type a thread parsed to rebuild a request. A resume's lane sends run
   * after run of operations to one endpoint, and parsing the same text again (OkHttp's URL parser
   * with its host mapping, the media type's regular expression) was 7 % of a lane's CPU. One entry
   * each, so bounded; equal text parses to an equal, immutable value.
   */
  private static final class LastParsed {
    private String uri;
    private HttpUrl url;
    private String type;
    private MediaType mediaType;

    HttpUrl url(URI u) {
      // The text, not URI.equals: that one takes %2b and %2B for the same, and the request must
      // go out as journaled, byte for byte (an app's interceptor may sign it).
      String text = u.toString();
      if (!text.equals(uri)) {
        // What Request.Builder.url(String) parses a snapshot's http or https URI into.
        url = HttpUrl.get(text);
        uri = text;
      }
      return url;
    }

    /** {@link MediaType#parse}: null for a type it cannot read. */
    MediaType mediaType(String t) {
      if (!t.equals(type)) {
        mediaType = MediaType.parse(t);
        type = t;
      }
      return mediaType;
    }
  }

  private static final ThreadLocal<LastParsed> LAST_PARSED = ThreadLocal.withInitial(LastParsed::new);

  /**
   * The name under which OkHttp can carry a response header it read from the wire, or null if it
   * cannot carry that header at all. OkHttp reads a response's header lines leniently:
   * {@code X-Trace-Id : abc} (whitespace before the colon, which RFC 9112 section 5.1 forbids)
   * keeps the space in the name, and a line without a colon, or starting with one, gets the empty
   * name. Its {@code Headers.Builder} refuses both names when a response is built, even through
   * {@code addUnsafeNonAscii}, so a stored answer holding one could never be replayed. RFC 9112
   * has a proxy remove such whitespace before it forwards the response, so the name is trimmed of
   * spaces and tabs; a name still refused (empty, or with a control, space or non-ASCII character
   * inside) names no header anyone could ask for, and its header is left out.
   *
   * @param name a header name as OkHttp read it, or as a journal stored it
   * @return {@code name}, trimmed if need be, or null if OkHttp cannot carry it
   */
  static String carriedName(String name) {
    if (isCarried(name)) {
      return name;  // every name a conforming server sends: no copy
    }
    int start = 0;
    int end = name.length();
    while (start < end && isOws(name.charAt(start))) {
      start++;
    }
    while (end > start && isOws(name.charAt(end - 1))) {
      end--;
    }
    String trimmed = name.substring(start, end);
    return isCarried(trimmed) ? trimmed : null;
  }

  /** Whether OkHttp's builders take {@code name}: not empty, and only visible ASCII (its own check). */
  static boolean isCarried(String name) {
    if (name.isEmpty()) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c <= ' ' || c > '~') {
        return false;
      }
    }
    return true;
  }

  private static boolean isOws(char c) {
    return c == ' ' || c == '\t';
  }

  // OkHttp refuses these methods without a body; an empty one is what the app sent.
  private static boolean needsBody(String method) {
    return switch (method.toUpperCase(Locale.ROOT)) {
      case "POST", "PUT", "PATCH", "PROPPATCH", "REPORT" -> true;
      default -> false;
    };
  }

  /**
   * Rebuilds a response from a snapshot, for a result this call did not receive itself (it came
   * from the journal, or from a concurrent call with the same key).
   */
  public static Response toResponse(ResponseSnapshot snapshot, Request request) {
    Headers.Builder headers = new Headers.Builder();
    int dropped = 0;
    for (Map.Entry<String, List<String>> header : snapshot.headers().entrySet()) {
      // A journal written before ResponseCapture normalised names may hold one OkHttp refuses to
      // build (addUnsafeNonAscii relaxes the value only): the replay of an operation that did
      // succeed must not fail on it, on this call or on any later one.
      String name = carriedName(header.getKey());
      if (name == null) {
        dropped += header.getValue().size();
        continue;
      }
      for (String value : header.getValue()) {
        headers.addUnsafeNonAscii(name, value);
      }
    }
    if (dropped > 0) {
      // Neither the name nor the value: either may be anything the server wrote.
      LOG.debug("Left {} stored response header line(s) without a usable name out of a replayed response", dropped);
    }
    Headers built = headers.build();
    // From the headers as replayed, not the snapshot's: an older journal's "Content-Type " is
    // found only under its trimmed name. And as OkHttp gives a live body its type, from the last
    // Content-Type line, so the body's type and the replay's header("Content-Type") agree.
    String contentType = built.get("Content-Type");
    MediaType type = contentType == null ? null : MediaType.parse(contentType);
    return new Response.Builder()
        .request(request)
        .protocol(Protocol.HTTP_1_1)
        .code(snapshot.status())
        .message("")
        .headers(built)
        .body(ResponseBody.create(snapshot.body(), type))
        .build();
  }
}
