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
 * A request's header section, and a chunked body's trailer section, of more than 100 lines or
 * 64 KiB (the lines' bytes without their CR LF; the request line counts in the head) is refused
 * with 431 as soon as it passes a limit, and not counted. Each line was bounded at 8 KiB, but not
 * how many came: the server kept every header line of a head without end in memory, and read
 * trailer lines for as long as a client sent them. The client here sends one line past a limit
 * and keeps its side open; a server that waits for the empty line never answers (the socket's
 * timeout only ends a failing run).
 */
class StreamingBodyServerHeaderSectionTest {
  private static final int MAX_LINES = 100;
  private static final int MAX_BYTES = 64 * 1024;
  private static final String REQUEST_LINE = "POST / HTTP/1.1";

  @Test
  void aHeaderSectionOfOneLineTooManyIsRefusedWithoutWaitingForItsEnd() throws Exception {
    try (StreamingBodyServer server = server()) {
      String answer = send(server, REQUEST_LINE + "\r\n" + "X-A: 1\r\n".repeat(MAX_LINES + 1));
      assertTrue(answer.startsWith("HTTP/1.1 431 "), answer);
      assertEquals(0, server.requests());
    }
  }

  @Test
  void aHeaderSectionOfTheMostLinesIsRead() throws Exception {
    try (StreamingBodyServer server = server()) {
      String answer = send(server, REQUEST_LINE + "\r\nIdempotency-Key: k-1\r\nContent-Length: 0\r\n"
          + "X-A: 1\r\n".repeat(MAX_LINES - 2) + "\r\n");
      assertTrue(answer.startsWith("HTTP/1.1 201 "), answer);
      assertEquals(1, server.requests());
      assertEquals("k-1", server.keys().get(0).orElseThrow());
    }
  }

  @Test
  void aHeadOfOneByteTooManyIsRefusedWithoutWaitingForItsEnd() throws Exception {
    try (StreamingBodyServer server = server()) {
      String answer = send(server, REQUEST_LINE + "\r\n" + fields(MAX_BYTES + 1 - REQUEST_LINE.length()));
      assertTrue(answer.startsWith("HTTP/1.1 431 "), answer);
      assertEquals(0, server.requests());
    }
  }

  @Test
  void aHeadOfTheMostBytesIsRead() throws Exception {
    try (StreamingBodyServer server = server()) {
      String known = "Idempotency-Key: k-1\r\nContent-Length: 0\r\n";
      int knownBytes = "Idempotency-Key: k-1".length() + "Content-Length: 0".length();
      String answer = send(server, REQUEST_LINE + "\r\n" + known
          + fields(MAX_BYTES - REQUEST_LINE.length() - knownBytes) + "\r\n");
      assertTrue(answer.startsWith("HTTP/1.1 201 "), answer);
      assertEquals(1, server.requests());
    }
  }

  @Test
  void aTrailerSectionOfOneLineTooManyIsRefusedWithoutWaitingForItsEnd() throws Exception {
    try (StreamingBodyServer server = server()) {
      String answer = send(server, chunkedHead() + "3\r\nabc\r\n0\r\n" + "X-T: 1\r\n".repeat(MAX_LINES + 1));
      assertTrue(answer.startsWith("HTTP/1.1 431 "), answer);
      assertEquals(0, server.requests());
    }
  }

  @Test
  void aTrailerSectionOfOneByteTooManyIsRefusedWithoutWaitingForItsEnd() throws Exception {
    try (StreamingBodyServer server = server()) {
      String answer = send(server, chunkedHead() + "3\r\nabc\r\n0\r\n" + fields(MAX_BYTES + 1));
      assertTrue(answer.startsWith("HTTP/1.1 431 "), answer);
      assertEquals(0, server.requests());
    }
  }

  @Test
  void aTrailerSectionAtBothLimitsIsRead() throws Exception {
    try (StreamingBodyServer server = server()) {
      String answer = send(server, chunkedHead() + "3\r\nabc\r\n0\r\n" + fields(MAX_BYTES) + "\r\n");
      assertTrue(answer.startsWith("HTTP/1.1 201 "), answer);
      answer = send(server, chunkedHead() + "3\r\nabc\r\n0\r\n" + "X-T: 1\r\n".repeat(MAX_LINES) + "\r\n");
      assertTrue(answer.startsWith("HTTP/1.1 201 "), answer);
      assertEquals(2, server.requests());
    }
  }

  private static StreamingBodyServer server() throws IOException {
    return StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 2, true));
  }

  private static String chunkedHead() {
    return REQUEST_LINE + "\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  }

  /**
   * Field lines, each with its CR LF, whose bytes without the CR LFs add up to {@code bytes}: as
   * few lines as 8 KiB each allows, well under the line limit.
   */
  private static String fields(int bytes) {
    StringBuilder b = new StringBuilder();
    int left = bytes;
    while (left > 0) {
      int n = Math.min(left, 8000);
      if (left - n > 0 && left - n < 8) {
        n -= 8; // leaves room for a last line of at least "X-P: " and a value
      }
      b.append("X-P: ").append("a".repeat(n - 5)).append("\r\n");
      left -= n;
    }
    return b.toString();
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
