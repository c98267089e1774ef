package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * How {@link StreamingBodyServer} finds the end of a request body, over a raw socket so that the
 * framing is exactly what the test writes: a length past 2 GiB is not cut to an int, a length that
 * is not one is refused with 400, and either way only a whole request counts.
 */
class StreamingBodyServerRequestLengthTest {
  @Test
  void aContentLengthPast2GiBIsNotCutToAnInt() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 2, true))) {
      // (int) 4_294_967_301L is 5: a server that cast would take these 5 bytes for the whole body.
      String answer = exchange(server, "Content-Length: 4294967301\r\n", "12345");
      assertEquals("", answer, "the body is not whole, so there is nothing to answer yet");
      assertEquals(0, server.requests(), "a request whose body never arrived whole is not an effect");
    }
  }

  @Test
  void aNegativeContentLengthIsRefusedAndNotCounted() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 2, true))) {
      String answer = exchange(server, "Content-Length: -1\r\n", "");
      assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
      assertEquals(0, server.requests());
    }
  }

  @Test
  void aChunkedBodyWithExtensionsAndTrailersIsReadToItsEnd() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 2, true))) {
      String answer = exchange(server, "Transfer-Encoding: chunked\r\nIdempotency-Key: k-1\r\n",
          "3;name=value\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: 1\r\n\r\n");
      assertTrue(answer.startsWith("HTTP/1.1 201 "), answer);
      assertEquals(1, server.requests());
      assertEquals("k-1", server.keys().get(0).orElseThrow());
    }
  }

  @Test
  void aTransferCodingOtherThanChunkedLastIsRefusedAndNotCounted() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 2, true))) {
      String answer = exchange(server, "Transfer-Encoding: chunked, gzip\r\n", "");
      assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
      assertEquals(0, server.requests());
    }
  }

  /** Sends a POST with these header lines and body bytes, ends the request side, reads the answer. */
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
