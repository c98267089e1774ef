package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A client that connects and sends nothing, or stops in the middle of its head, held a thread of
 * the server for good: it read without a timeout. With a read timeout (here 200 ms, so that the
 * test does not wait the default 30 s) the server closes such a connection, counts no request,
 * and goes on serving the next client. Each client's own socket timeout (10 s) only ends a failing
 * run: a server without the timeout never closes, and the read below fails with a timeout instead
 * of seeing the end of the stream.
 */
class StreamingBodyServerReadTimeoutTest {
  private static final Duration READ_TIMEOUT = Duration.ofMillis(200);

  @Test
  void aSilentClientIsDroppedAndTheNextOneServed() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 3, true),
        READ_TIMEOUT)) {
      assertEquals("", sendAndReadToClose(server, ""), "the server closed the silent connection, answering nothing");
      assertServes(server);
    }
  }

  @Test
  void aClientThatStallsInItsHeadIsDroppedAndTheNextOneServed() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 3, true),
        READ_TIMEOUT)) {
      assertEquals("", sendAndReadToClose(server, "POST / HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k-stalled\r\nX-Half"),
          "the server closed the stalled connection, answering nothing");
      assertServes(server);
    }
  }

  @Test
  void aClientThatStallsInItsBodyIsDroppedAndNotCounted() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 3, true),
        READ_TIMEOUT)) {
      assertEquals("", sendAndReadToClose(server,
          "POST / HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k-stalled\r\nContent-Length: 10\r\n\r\nabc"));
      assertServes(server);
    }
  }

  @Test
  void theReadTimeoutMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> StreamingBodyServer.start(i -> null, Duration.ZERO));
    assertThrows(IllegalArgumentException.class, () -> StreamingBodyServer.start(i -> null, Duration.ofMillis(-1)));
    assertThrows(NullPointerException.class, () -> StreamingBodyServer.start(i -> null, null));
  }

  /** The dropped client was not counted, and a whole request is answered and counted with its key. */
  private static void assertServes(StreamingBodyServer server) throws IOException {
    assertEquals(0, server.requests(), "a request cut short by the timeout is not counted");
    String answer = sendAndReadToClose(server, "POST / HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k-1\r\n"
        + "Content-Length: 0\r\n\r\n");
    assertTrue(answer.startsWith("HTTP/1.1 201 "), answer);
    assertEquals(List.of(Optional.of("k-1")), server.keys());
  }

  /** Sends these bytes, keeps the request side open, and reads what comes back until the server closes. */
  private static String sendAndReadToClose(StreamingBodyServer server, String request) throws IOException {
    try (Socket s = new Socket(server.url().getHost(), server.url().getPort())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      InputStream in = s.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
    }
  }
}
