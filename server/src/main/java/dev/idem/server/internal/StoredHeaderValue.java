package dev.idem.server.internal;

/**
 * A response header value as the store keeps it: each control character but HTAB (CR, LF, NUL and
 * the others RFC 9110 section 5.5 forbids in a field value) as a space, which is what Tomcat and
 * Jetty write on the wire for such a value. The handler's value may hold one when it echoes client
 * input (a {@code Location} built from a reference); stored as given, a line break split the value
 * in {@link HeaderCodec}'s text, and its tail was replayed as a header of its own (a
 * {@code Set-Cookie} the handler never set), and a NUL made every completion fail on PostgreSQL,
 * whose text columns refuse it, so the retry ran the handler again. Stateless.
 */
public final class StoredHeaderValue {
  private StoredHeaderValue() {}

  /** {@code value} with its control characters but HTAB as spaces; {@code value} itself if it has none. */
  public static String of(String value) {
    if (value == null) {
      return null;
    }
    char[] out = null;
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if ((c < 0x20 && c != '\t') || c == 0x7f) {
        if (out == null) {
          out = value.toCharArray();
        }
        out[i] = ' ';
      }
    }
    return out == null ? value : new String(out);
  }
}
