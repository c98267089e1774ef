package dev.idem.server.servlet;

import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;

/**
 * Drops the part of a request's body that nobody read, before the guard answers the request
 * itself, so that the connection can carry the client's next request.
 */
final class UnreadBody {
  /** As much as is worth reading to keep a connection; the JDK's HttpServer drains the same. */
  static final int LIMIT = 64 * 1024;

  /**
   * Set when the guard read a body of declared length to its end. A container may not call the
   * stream finished until a read has returned -1, and a drop that cannot tell would close every
   * connection that carried a replay or a conflict.
   */
  private static final String READ_TO_END = UnreadBody.class.getName() + ".readToEnd";

  private UnreadBody() {}

  /** Records that the request's body of declared length was read to its end. */
  static void readToEnd(HttpServletRequest request) {
    request.setAttribute(READ_TO_END, Boolean.TRUE);
  }

  /**
   * Reads and drops the body bytes that have already arrived, up to {@link #LIMIT}, without
   * waiting for more.
   *
   * @return true if the body is now read to its end (or there is none), false if bytes may still
   *     follow on the connection
   */
  static boolean drop(HttpServletRequest request) {
    if (request.getAttribute(READ_TO_END) != null || request.getContentLengthLong() == 0
        || request.getContentLengthLong() < 0 && request.getHeader("Transfer-Encoding") == null) {
      return true;
    }
    try {
      ServletInputStream in = request.getInputStream();
      byte[] buffer = new byte[8192];
      long left = LIMIT;
      while (left > 0 && !in.isFinished()) {
        int ready = in.available();
        if (ready <= 0) {
          break;
        }
        int n = in.read(buffer, 0, (int) Math.min(Math.min(ready, buffer.length), left));
        if (n < 0) {
          return true;
        }
        left -= n;
      }
      return in.isFinished();
    } catch (IOException | IllegalStateException e) {
      // A reader already taken, or a broken stream: the connection is not worth keeping.
      return false;
    }
  }
}
