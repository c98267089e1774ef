package dev.idem.jdbc.support;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * HTTP/1.1 by hand on one socket, for tests of what a server does to the connection (an HTTP
 * client would open another one and hide it).
 */
public final class RawHttp {
  private RawHttp() {}

  /**
   * Writes the request (head and whatever part of the body it carries) and reads the answer.
   *
   * @return the answer's head (status line and headers); its body is read and dropped
   * @throws IOException if the connection closes before a whole head arrives
   */
  public static String exchange(Socket socket, String request) throws IOException {
    return exchange(socket, request.getBytes(StandardCharsets.UTF_8));
  }

  /** As {@link #exchange(Socket, String)}, with the request's bytes. */
  public static String exchange(Socket socket, byte[] request) throws IOException {
    socket.getOutputStream().write(request);
    socket.getOutputStream().flush();
    InputStream in = socket.getInputStream();
    StringBuilder head = new StringBuilder();
    while (head.indexOf("\r\n\r\n") < 0) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("the connection closed after " + head.length() + " bytes: " + head);
      }
      head.append((char) b);
    }
    for (String line : head.toString().split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        in.readNBytes(Integer.parseInt(line.substring("content-length:".length()).trim()));
      }
    }
    return head.toString();
  }

  /** Whether the answer's head says the server closes the connection after it. */
  public static boolean closes(String head) {
    return head.toLowerCase(Locale.ROOT).contains("\r\nconnection: close\r\n");
  }
}
