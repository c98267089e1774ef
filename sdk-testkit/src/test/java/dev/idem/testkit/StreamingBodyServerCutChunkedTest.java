package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * StreamingBodyServer's Javadoc: a request "whose client goes away before it is whole" is not
 * counted in requests(). A chunked body ends with its last chunk AND the empty line that closes
 * the trailer section (RFC 9112, 7.1); the server stops reading trailers at the end of the stream
 * as if that line had come, and counts the cut request as an effect.
 */
class StreamingBodyServerCutChunkedTest {
  @Test
  void aChunkedRequestCutAfterItsLastChunkBeforeTheTrailerSectionEndsIsNotCounted() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 2, true))) {
      String answer = exchange(server, "Transfer-Encoding: chunked\r\nIdempotency-Key: k-1\r\n",
          "3\r\nabc\r\n0\r\nX-Trailer: 1\r\n");
      assertEquals(0, server.requests(), "a chunked request cut before the end of its trailer section was counted as"
          + " an effect, and answered: " + answer.lines().findFirst().orElse("(nothing)"));
    }
  }

  @Test
  void aChunkedRequestCutRightAfterTheZeroChunkLineIsNotCounted() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 2, true))) {
      String answer = exchange(server, "Transfer-Encoding: chunked\r\n", "3\r\nabc\r\n0\r\n");
      assertEquals(0, server.requests(), "a chunked request cut before the empty line that ends it was counted as"
          + " an effect, and answered: " + answer.lines().findFirst().orElse("(nothing)"));
    }
  }

  /** Sends a POST with these header lines and body bytes, ends the request side, reads to the server's close. */
  private static String exchange(StreamingBodyServer server, String headers, String body) throws IOException {
    try (Socket s = new Socket(server.url().getHost(), server.url().getPort())) {
      OutputStream out = s.getOutputStream();
      out.write(("POST / HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n" + body).getBytes(StandardCharsets.US_ASCII));
      out.flush();
      s.shutdownOutput();
      InputStream in = s.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
    }
  }
}
