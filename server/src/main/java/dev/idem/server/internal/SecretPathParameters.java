package dev.idem.server.internal;

import dev.idem.core.spi.RequestSnapshot;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Takes the credential path parameters out of a raw request path: every {@code ;name} or
 * {@code ;name=value}, in any segment, whose name (percent-decoded, any case) the client's rule
 * names ({@link RequestSnapshot#isSecretPathParameterByDefault}: a servlet container's
 * {@code ;jsessionid=}, {@code ;sig=}, {@code ;key=}). The guard keys and fingerprints a request
 * by its path and stores the route, so such a parameter would be kept in clear, and a retry whose
 * session id changed would be another operation. Removed, not redacted: a new session id must
 * give the same identity. Everything else is kept as written (raw, undecoded, other matrix
 * parameters), so that a path without such a parameter, and the records stored for it before,
 * are unchanged.
 *
 * <p>Linear in the path's length. Pure and thread-safe.
 */
public final class SecretPathParameters {
  private SecretPathParameters() {}

  /**
   * @param rawPath a raw (encoded) request path, without the query
   * @return {@code rawPath} without its credential path parameters; {@code rawPath} itself when
   *     it has none
   */
  public static String removedFrom(String rawPath) {
    int semi = rawPath.indexOf(';');
    if (semi < 0) {
      return rawPath;
    }
    int n = rawPath.length();
    StringBuilder out = null;
    int copied = 0;
    while (semi >= 0) {
      int end = semi + 1;
      int eq = -1;
      for (char c; end < n && (c = rawPath.charAt(end)) != ';' && c != '/'; end++) {
        if (c == '=' && eq < 0) {
          eq = end;
        }
      }
      String name = decode(rawPath, semi + 1, eq < 0 ? end : eq);
      if (RequestSnapshot.isSecretPathParameterByDefault(name)) {
        if (out == null) {
          out = new StringBuilder(n);
        }
        out.append(rawPath, copied, semi);
        copied = end;
      }
      semi = rawPath.indexOf(';', end);
    }
    return out == null ? rawPath : out.append(rawPath, copied, n).toString();
  }

  /**
   * {@code s[from, to)} with its valid {@code %XX} escapes decoded as UTF-8, leniently (a stray
   * {@code %} is kept): as the client's rule reads a path parameter's name, so that
   * {@code ;%6Asessionid=} is judged as {@code jsessionid}. Bounded by the name, never the rest
   * of the path, so that many parameters cost no more than their length.
   */
  static String decode(CharSequence s, int from, int to) {
    ByteArrayOutputStream bytes = null;
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      int hi;
      int lo;
      if (c == '%' && i + 2 < to && (hi = Character.digit(s.charAt(i + 1), 16)) >= 0
          && (lo = Character.digit(s.charAt(i + 2), 16)) >= 0) {
        if (bytes == null) {
          bytes = new ByteArrayOutputStream(to - from);
          byte[] before = s.subSequence(from, i).toString().getBytes(StandardCharsets.UTF_8);
          bytes.write(before, 0, before.length);
        }
        bytes.write(hi << 4 | lo);
        i += 2;
      } else if (bytes != null) {
        byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        bytes.write(b, 0, b.length);
      }
    }
    return bytes == null ? s.subSequence(from, to).toString() : bytes.toString(StandardCharsets.UTF_8);
  }
}
