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
 * A request line, header line, chunk-size line or trailer line longer than 8 KiB is refused with
 * 400 as soon as it passes the limit, and not counted: the server read such a line to its LF
 * whatever its length, so a client that sent one without end filled the server's memory. The
 * client here sends 8,193 bytes of one line and keeps its side open; a server that waits for the
 * LF never answers (the socket's timeout only ends a failing run).
 */
class StreamingBodyServerLongLineTest {
  private static final int LIMIT = 8192;

  @Test
  void aHeaderLinePastTheLimitIsRefusedWithoutWaitingForItsEnd() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 2, true))) {
      String answer = send(server, "POST / HTTP/1.1\r\nHost: x\r\n" + line("X-Long: ", LIMIT + 1));
      assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
      assertEquals(0, server.requests());
    }
  }

  @Test
  void aChunkSizeLinePastTheLimitIsRefusedWithoutWaitingForItsEnd() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 2, true))) {
      String answer = send(server, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
          + line("1;ext=", LIMIT + 1));
      assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
      assertEquals(0, server.requests());
    }
  }

  @Test
  void aTrailerLinePastTheLimitIsRefusedWithoutWaitingForItsEnd() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 2, true))) {
      String answer = send(server, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
          + "3\r\nabc\r\n0\r\n" + line("X-Trailer: ", LIMIT + 1));
      assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
      assertEquals(0, server.requests());
    }
  }

  @Test
  void aLineAtTheLimitIsRead() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 2, true))) {
      String answer = send(server, "POST / HTTP/1.1\r\nHost: x\r\n" + line("X-Long: ", LIMIT)
          + "\r\nIdempotency-Key: k-1\r\nContent-Length: 0\r\n\r\n");
      assertTrue(answer.startsWith("HTTP/1.1 201 "), answer);
      assertEquals(1, server.requests());
      assertEquals("k-1", server.keys().get(0).orElseThrow());
    }
  }

  /** {@code prefix} padded with 'a' to {@code length} bytes, without a line end. */
  private static String line(String prefix, int length) {
    return prefix + "a".repeat(length - prefix.length());
  }

  /** Sends these bytes, keeps the request side open, and reads the answer to the server's close. */
  private static String send(StreamingBodyServer server, String request) throws IOException {
    try (Socket s = new Socket(server.url().getHost(), server.url().getPort())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(request.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
    }
  }
}
