package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.testkit.StreamingBodyServer;
import dev.idem.testkit.StreamingBodyServer.Reply;
import dev.idem.testkit.support.HeapLimitedJvm;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15, "Responses stream", for java.net.http: the outcome is decided from the status and the
 * headers, the journal keeps at most {@link ResponseSnapshot#MAX_CAPTURED_BODY} bytes, and the
 * caller's BodyHandler gets the body as it arrives. Before, every attempt was read with
 * {@code ofByteArray}: 50 MB cost more than 150 MB of heap, an endless body ran the JVM out of
 * memory, and a trickling one never returned its status line.
 */
class StreamingResponsesTest {
  private static final long FIFTY_MB = 50L * 1024 * 1024;
  private final Fixture f = new Fixture();

  @Test
  void fiftyMegabyteBodyStreamsThroughA32MegabyteHeap(@TempDir Path dir) throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(
        n -> n == 0 ? Reply.of(200, 100, true) : Reply.of(200, FIFTY_MB, true))) {
      String out = HeapLimitedJvm.run(dir, BoundedHeapChild.class, server.url().toString());
      System.out.println("StreamingResponsesTest (java.net.http) 50 MB through -Xmx32m: " + out.strip());
      // The child would die of OutOfMemoryError in -Xmx32m if any layer buffered the 50 MB.
      assertTrue(out.contains("status=SUCCEEDED read=" + FIFTY_MB + " mismatches=0"), out);
      long allocated = HeapLimitedJvm.figure(out, "allocatedBeforeBody");
      assertTrue(allocated < 2 * 1024 * 1024, "allocated before the body was read: " + allocated + "\n" + out);
      assertEquals(0, HeapLimitedJvm.figure(out, "storedBody"), out);
      assertEquals(2, server.requests(), "the warm-up call and the download");
    }
  }

  @Test
  void endlessBodyReturnsItsStatusAndAStreamAndTheJournalKeepsNoBody() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(n -> Reply.of(200, -1, false))) {
      IdempotentHttpResponse<InputStream> response = f.client.operation("endless")
          .send(post(server), BodyHandlers.ofInputStream());
      assertEquals(200, response.statusCode());
      byte[] first = new byte[1_000_000];
      try (InputStream in = response.body()) {
        assertEquals(first.length, in.readNBytes(first, 0, first.length));
      }
      for (int i = 0; i < first.length; i += 997) {
        assertEquals(StreamingBodyServer.expectedByte(i), first[i]);
      }
      assertTrue(server.awaitClientClosed(10_000), "the caller closed the stream; the server's writes failed");
      OperationRecord record = f.record(response.operationId());
      assertEquals(OperationState.SUCCEEDED, record.state());
      assertEquals(0, record.response().body().length);
      assertEquals(Optional.of("unknown"), record.response().header(ResponseSnapshot.BODY_NOT_KEPT_HEADER));
      assertEquals(1, server.requests());
    }
  }

  @Test
  void tricklingBodyReturnsItsStatusLineBeforeTheBodyEnds() throws Exception {
    // One byte, then the server waits for release(): send() can only return if it does not wait
    // for the body (a buffering adapter hangs until the request's 5 s timeout, then fails).
    try (StreamingBodyServer server = StreamingBodyServer.start(n -> Reply.of(200, 10, false).gatedAfter(1))) {
      IdempotentHttpResponse<InputStream> response = f.client.operation("trickle")
          .send(post(server), BodyHandlers.ofInputStream());
      assertEquals(200, response.statusCode());
      assertEquals(OperationState.SUCCEEDED, f.record(response.operationId()).state(), "settled before the body ended");
      server.release();
      byte[] expected = new byte[10];
      for (int i = 0; i < 10; i++) {
        expected[i] = StreamingBodyServer.expectedByte(i);
      }
      try (InputStream in = response.body()) {
        assertArrayEquals(expected, in.readAllBytes());
      }
    }
  }

  @Test
  void tricklingBodyAsyncCompletesWithTheStatusBeforeTheBodyEnds() throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(n -> Reply.of(200, 10, false).gatedAfter(1))) {
      IdempotentHttpResponse<InputStream> response = f.await(f.client.operation("trickle-async")
          .sendAsync(post(server), BodyHandlers.ofInputStream()));
      assertEquals(200, response.statusCode());
      server.release();
      try (InputStream in = response.body()) {
        assertEquals(10, in.readAllBytes().length);
      }
    }
  }

  @Test
  void smallDeclaredBodyIsKeptWholeAndStillReachesTheCaller() throws Exception {
    int size = ResponseSnapshot.MAX_CAPTURED_BODY;
    try (StreamingBodyServer server = StreamingBodyServer.start(n -> Reply.of(201, size, true))) {
      IdempotentHttpResponse<byte[]> response = f.client.operation("small")
          .send(post(server), BodyHandlers.ofByteArray());
      byte[] stored = f.record(response.operationId()).response().body();
      assertEquals(size, stored.length, "the journal keeps a body of exactly the cap");
      assertArrayEquals(stored, response.body());
    }
  }

  @Test
  void retriedAttemptsEndlessErrorBodiesAreStoppedAndTheLastBodyStreams() throws Exception {
    // Two 503s whose bodies never end, then a chunked 2xx of 3 MB.
    try (StreamingBodyServer server = StreamingBodyServer.start(
        n -> n < 2 ? Reply.of(503, -1, false) : Reply.of(200, 3 * 1024 * 1024, false))) {
      IdempotentHttpResponse<InputStream> response = f.client.operation("retried")
          .send(post(server), BodyHandlers.ofInputStream());
      assertEquals(200, response.statusCode());
      StreamingBodyServer.Received received;
      try (InputStream in = response.body()) {
        received = StreamingBodyServer.readAll(in);
      }
      assertEquals(3 * 1024 * 1024, received.bytes());
      assertEquals(0, received.mismatches(), "the body as the server sent it");
      assertEquals(3, server.requests());
      assertEquals(1, server.keys().stream().distinct().count(), "one key on every attempt: " + server.keys());
      assertTrue(server.keys().get(0).isPresent());
      OperationRecord record = f.record(response.operationId());
      assertEquals(OperationState.SUCCEEDED, record.state());
      assertEquals(3, record.attempts().size());
    }
  }

  @Test
  void failedResponseWithALargeBodyStreamsToTheCaller() throws Exception {
    long size = 1024 * 1024;
    try (StreamingBodyServer server = StreamingBodyServer.start(n -> Reply.of(403, size, false))) {
      IdempotentHttpResponse<byte[]> response = f.client.operation("refused")
          .send(post(server), BodyHandlers.ofByteArray());
      assertEquals(403, response.statusCode());
      assertEquals(size, response.body().length, "the captured prefix, then the rest");
      OperationRecord record = f.record(response.operationId());
      assertEquals(OperationState.FAILED, record.state());
      assertEquals(0, record.response().body().length);
      assertFalse(record.response().header(ResponseSnapshot.BODY_NOT_KEPT_HEADER).isEmpty());
      assertEquals(1, server.requests());
    }
  }

  private static HttpRequest post(StreamingBodyServer server) {
    return Fixture.post(server.url(), "{\"qty\":1}");
  }
}
