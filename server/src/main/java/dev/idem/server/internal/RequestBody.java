package dev.idem.server.internal;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Reads a request body for the guard, up to its limit. With a declared length within the limit,
 * it reads into an array of that size: {@link InputStream#readNBytes(int)} would allocate a
 * buffer of 8 KiB or more and then copy the body out of it, for every keyed request.
 */
public final class RequestBody {
  private RequestBody() {}

  /**
   * @param in the body
   * @param declaredLength the request's {@code Content-Length}, or -1 if it has none (chunked)
   * @param limit the most bytes to read
   * @return the body, or its first {@code limit} bytes if it is longer
   * @throws IOException if the body cannot be read
   */
  public static byte[] read(InputStream in, long declaredLength, int limit) throws IOException {
    if (declaredLength < 0 || declaredLength > limit) {
      return in.readNBytes(limit);
    }
    byte[] body = new byte[(int) declaredLength];
    int n = in.readNBytes(body, 0, body.length);
    return n == body.length ? body : Arrays.copyOf(body, n);
  }

  /**
   * @param contentLength the value of the {@code Content-Length} header, or null
   * @param transferEncoding the value of the {@code Transfer-Encoding} header, or null
   * @return the length, or -1 if there is none, it is not a plain non-negative number, or the body
   *     has a transfer coding: that decides where the body ends, whatever the length says (RFC 9112,
   *     6.3), so a body sized by the length could be cut short
   */
  public static long declaredLength(String contentLength, String transferEncoding) {
    return transferEncoding != null ? -1 : declaredLength(contentLength);
  }

  static long declaredLength(String header) {
    if (header == null || header.isEmpty() || header.length() > 18) {
      return -1;
    }
    long n = 0;
    for (int i = 0; i < header.length(); i++) {
      char c = header.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      n = n * 10 + (c - '0');
    }
    return n;
  }
}
