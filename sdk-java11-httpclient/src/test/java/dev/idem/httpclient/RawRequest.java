package dev.idem.httpclient;

import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;

/** Reads one HTTP/1.1 request off a raw socket, for tests whose server misbehaves on purpose. */
final class RawRequest {
  private RawRequest() {}

  /**
   * Reads a request's head and its Content-Length body.
   *
   * @return false if the stream ended first
   */
  static boolean read(InputStream in) throws IOException {
    return read(in, l -> { });
  }

  /**
   * Reads a request's head and its Content-Length body, handing each header line to {@code headers}.
   *
   * @return false if the stream ended first
   */
  static boolean read(InputStream in, java.util.function.Consumer<String> headers) throws IOException {
    int length = 0;
    StringBuilder line = new StringBuilder();
    while (true) {
      int c = in.read();
      if (c < 0) {
        return false;
      }
      if (c != '\n') {
        line.append((char) c);
        continue;
      }
      String l = line.toString().trim();
      line.setLength(0);
      if (l.isEmpty()) {
        in.readNBytes(length);
        return true;
      }
      headers.accept(l);
      if (l.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(l.substring(15).trim());
      }
    }
  }
}
