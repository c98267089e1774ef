package dev.idem.server.servlet;

import jakarta.servlet.http.HttpServletRequest;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.Charset;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.StandardCharsets;
import java.nio.charset.UnsupportedCharsetException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A form-encoded request body ({@code application/x-www-form-urlencoded}) as the guard deals with
 * it: its parameters as the container would parse them, and, for a body an earlier filter already
 * consumed, a canonical encoding of the parameters to fingerprint instead.
 */
final class FormBody {
  /**
   * Set on a request whose form body was consumed before the guard (a filter read its parameters),
   * or whose multipart body the container parsed for the guard ({@link MultipartBody}): the guard
   * fingerprinted its parameters or parts, which are no body to replay.
   */
  static final String FINGERPRINTED_PARAMETERS = FormBody.class.getName() + ".fingerprintedParameters";

  private static final String FORM_TYPE = "application/x-www-form-urlencoded";

  /**
   * Tomcat's request attribute for a form or query it could not decode in full (a broken
   * {@code %}-escape, too many parameters): it dropped the pairs it could not read and goes on.
   * Jetty refuses such a form instead (400 from {@code getParameter}), so it sets nothing.
   */
  static final String TOMCAT_PARSE_FAILED = "org.apache.catalina.parameter_parse_failed";

  /** Marks a digest in place of a canonical encoding; {@link #canonical} never holds a NUL. */
  private static final byte DIGEST_MARK = 0;

  private FormBody() {}

  /** Whether a Content-Type is the form encoding (any case, with or without parameters). */
  static boolean isForm(String contentType) {
    if (contentType == null) {
      return false;
    }
    int end = contentType.indexOf(';');
    return (end < 0 ? contentType : contentType.substring(0, end)).strip().equalsIgnoreCase(FORM_TYPE);
  }

  /**
   * Whether the container parses parameters from this request's body (Servlet spec, 3.1.1: a POST
   * of the form encoding). Tomcat and Jetty do so for POST only; other methods' forms are left to
   * the app (Spring's {@code FormContentFilter}), which reads them from the body the guard replays.
   */
  static boolean hasBodyParameters(HttpServletRequest request) {
    return "POST".equals(request.getMethod()) && isForm(request.getContentType());
  }

  /**
   * The charset a form body is decoded in: the request's character encoding (its Content-Type's
   * {@code charset}, or what a filter set, such as Spring's {@code CharacterEncodingFilter}'s UTF-8),
   * else ISO-8859-1, the Servlet spec's default for POST data (Tomcat's too). One the JDK does not
   * know decodes as ISO-8859-1 rather than failing every {@code getParameter} call.
   */
  static Charset charset(HttpServletRequest request) {
    String name = request.getCharacterEncoding();
    if (name != null) {
      try {
        return Charset.forName(name.strip());
      } catch (IllegalCharsetNameException | UnsupportedCharsetException unknown) {
        // decoded as below
      }
    }
    return StandardCharsets.ISO_8859_1;
  }

  /**
   * The number of pairs in a form body: its {@code &}-separated parts that are not empty, each of
   * which {@link #parse} reads (or drops) as one parameter value.
   */
  static int pairs(byte[] body) {
    int pairs = 0;
    boolean inPair = false;
    for (byte b : body) {
      if (b == '&') {
        inPair = false;
      } else if (!inPair) {
        inPair = true;
        pairs++;
      }
    }
    return pairs;
  }

  /**
   * The parameters of a form body, in body order, decoded as Tomcat decodes them: pairs
   * split at {@code &}, name and value at the first {@code =} (a bare name has the value
   * {@code ""}), {@code +} is a space, {@code %XX} a byte of the charset. A pair without a name, or
   * one that is not validly percent-encoded, is skipped, as Tomcat skips it.
   */
  static Map<String, List<String>> parse(byte[] body, Charset charset) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (String pair : new String(body, charset).split("&")) {
      int eq = pair.indexOf('=');
      String rawName = eq < 0 ? pair : pair.substring(0, eq);
      if (rawName.isEmpty()) {
        continue;
      }
      try {
        String name = URLDecoder.decode(rawName, charset);
        String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), charset);
        out.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
      } catch (IllegalArgumentException malformed) {
        // A broken %-escape: the container drops the pair too.
      }
    }
    return out;
  }

  /**
   * The request's parameters, those of the query and then the body's, as the Servlet spec orders
   * them: {@code base} (the container's, which holds the query's) with the body's values after.
   */
  static Map<String, String[]> merge(Map<String, String[]> base, Map<String, List<String>> body) {
    Map<String, String[]> out = new LinkedHashMap<>(base);
    body.forEach((name, values) -> out.merge(name, values.toArray(String[]::new), (first, more) -> {
      String[] all = Arrays.copyOf(first, first.length + more.length);
      System.arraycopy(more, 0, all, first.length, more.length);
      return all;
    }));
    return out;
  }

  /**
   * A canonical encoding of a request's parameters, to fingerprint a form whose body was consumed
   * before the guard: names in {@link String#compareTo} order, each name's values in the order the
   * request gives them (they may mean something), form-encoded in UTF-8 and joined with {@code &}.
   * The same parameters always give the same bytes, and different ones different bytes.
   */
  static byte[] canonical(Map<String, String[]> parameters) {
    StringBuilder out = new StringBuilder();
    new TreeMap<>(parameters).forEach((name, values) -> {
      for (String value : values) {
        out.append(out.isEmpty() ? "" : "&").append(URLEncoder.encode(name, StandardCharsets.UTF_8))
            .append('=').append(URLEncoder.encode(value == null ? "" : value, StandardCharsets.UTF_8));
      }
    });
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * What stands for a canonical encoding too long to hand the guard within its cap: a NUL, which
   * no canonical encoding holds, then its SHA-256, so that it is one fingerprint for the same
   * parameters and another for different ones. The encoding escapes what the client may have sent
   * as it is, up to 9 bytes for one, so its length says nothing of the body's. Cut to
   * {@code most} bytes under a cap smaller than a digest.
   */
  static byte[] digest(byte[] canonical, int most) {
    try {
      byte[] sha = MessageDigest.getInstance("SHA-256").digest(canonical);
      byte[] out = new byte[sha.length + 1];
      out[0] = DIGEST_MARK;
      System.arraycopy(sha, 0, out, 1, sha.length);
      return out.length <= most ? out : Arrays.copyOf(out, Math.max(0, most));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  /**
   * The fewest bytes a form body with these parameters can have: each name and value in the
   * charset (an escape only lengthens it), with {@code =} and {@code &} between. The body's length
   * when its Content-Length is not known (a chunked body): at least this, and maybe more.
   */
  static long leastLength(Map<String, String[]> parameters, Charset charset) {
    long length = 0;
    for (Map.Entry<String, String[]> e : parameters.entrySet()) {
      long name = e.getKey().getBytes(charset).length;
      for (String value : e.getValue()) {
        length += name + 2 + (value == null ? 0 : value.getBytes(charset).length);
      }
    }
    return Math.max(0, length - 1);
  }
}
