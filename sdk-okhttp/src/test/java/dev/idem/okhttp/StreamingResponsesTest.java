package dev.idem.okhttp;

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
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15, "Responses stream": the outcome is decided from the status and the headers, the
 * journal keeps at most {@link ResponseSnapshot#MAX_CAPTURED_BODY} bytes, and the caller reads the
 * body as it arrives. Before, the adapter read every body into memory: 50 MB cost 155 MB of heap,
 * an endless body ran the JVM out of memory, and a trickling one never returned its status line.
 */
class StreamingResponsesTest {
  private static final long FIFTY_MB = 50L * 1024 * 1024;
  private final Fixture f = new Fixture();

  @Test
  void fiftyMegabyteBodyStreamsThroughA32MegabyteHeap(@TempDir Path dir) throws Exception {
    try (StreamingBodyServer server = StreamingBodyServer.start(
        n -> n == 0 ? Reply.of(200, 100, true) : Reply.of(200, FIFTY_MB, true))) {
      String out = HeapLimitedJvm.run(dir, BoundedHeapChild.class, server.url().toString());
      System.out.println("StreamingResponsesTest 50 MB through -Xmx32m: " + out.strip());
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
    IdemOkHttp idem = f.idem();
    IdempotentOperation op = IdempotentOperation.of("endless");
    try (StreamingBodyServer server = StreamingBodyServer.start(n -> Reply.of(200, -1, false))) {
      try (Response response = Fixture.client(idem).newCall(Fixture.order(server.url(), op)).execute()) {
        assertEquals(200, response.code());
        byte[] first = new byte[1_000_000];
        try (InputStream in = response.body().byteStream()) {
          int read = 0;
          while (read < first.length) {
            read += in.read(first, read, first.length - read);
          }
        }
        for (int i = 0; i < first.length; i += 997) {
          assertEquals(StreamingBodyServer.expectedByte(i), first[i]);
        }
      }
      // The caller closed the stream; the server saw its writes fail rather than being read to the end.
      assertTrue(server.awaitClientClosed(10_000));
      OperationRecord record = f.record(op);
      assertEquals(OperationState.SUCCEEDED, record.state());
      assertEquals(0, record.response().body().length);
      assertEquals(Optional.of("unknown"), record.response().header(ResponseSnapshot.BODY_NOT_KEPT_HEADER));
      assertEquals(List.of(Optional.of(op.key().value())), server.keys());
    }
  }

  @Test
  void tricklingBodyReturnsItsStatusLineBeforeTheBodyEnds() throws Exception {
    IdemOkHttp idem = f.idem();
    IdempotentOperation op = IdempotentOperation.of("trickle");
    // The server sends one byte, then waits for release() before it sends the rest: execute() can
    // only return if it does not wait for the body. (No timing threshold: a buffering adapter hangs
    // until the client's read timeout, then fails the attempt.)
    try (StreamingBodyServer server = StreamingBodyServer.start(n -> Reply.of(200, 10, false).gatedAfter(1))) {
      OkHttpClient client = Fixture.client(idem).newBuilder().readTimeout(java.time.Duration.ofSeconds(20)).build();
      try (Response response = client.newCall(Fixture.order(server.url(), op)).execute()) {
        assertEquals(200, response.code());
        assertEquals(OperationState.SUCCEEDED, f.record(op).state(), "settled before the body ended");
        server.release();
        byte[] body = response.body().bytes();
        byte[] expected = new byte[10];
        for (int i = 0; i < 10; i++) {
          expected[i] = StreamingBodyServer.expectedByte(i);
        }
        assertArrayEquals(expected, body);
      }
      assertEquals(1, server.requests());
    }
  }

  @Test
  void smallDeclaredBodyIsKeptWholeAndStillReachesTheCaller() throws Exception {
    IdemOkHttp idem = f.idem();
    IdempotentOperation op = IdempotentOperation.of("small");
    int size = ResponseSnapshot.MAX_CAPTURED_BODY;
    try (StreamingBodyServer server = StreamingBodyServer.start(n -> Reply.of(201, size, true))) {
      byte[] read;
      try (Response response = Fixture.client(idem).newCall(Fixture.order(server.url(), op)).execute()) {
        read = response.body().bytes();
      }
      byte[] stored = f.record(op).response().body();
      assertEquals(size, stored.length, "the journal keeps a body of exactly the cap");
      assertArrayEquals(stored, read);
      assertEquals(size, read.length);
    }
  }

  @Test
  void retriedAttemptsEndlessErrorBodiesAreClosedUnreadAndTheLastBodyStreams() throws Exception {
    IdemOkHttp idem = f.idem();
    IdempotentOperation op = IdempotentOperation.of("retried");
    // Two 503s whose bodies never end, then a 2xx of 3 MB: each 503 is classified from its status,
    // at most the cap of its body is read, and it is closed before the next attempt.
    try (StreamingBodyServer server = StreamingBodyServer.start(
        n -> n < 2 ? Reply.of(503, -1, false) : Reply.of(200, 3 * 1024 * 1024, false))) {
      StreamingBodyServer.Received received;
      try (Response response = Fixture.client(idem).newCall(Fixture.order(server.url(), op)).execute()) {
        assertEquals(200, response.code());
        try (InputStream in = response.body().byteStream()) {
          received = StreamingBodyServer.readAll(in);
        }
      }
      assertEquals(3 * 1024 * 1024, received.bytes());
      assertEquals(0, received.mismatches(), "the body as the server sent it");
      assertEquals(3, server.requests());
      assertEquals(1, server.keys().stream().distinct().count(), "one key on every attempt: " + server.keys());
      assertTrue(server.keys().get(0).isPresent());
      OperationRecord record = f.record(op);
      assertEquals(OperationState.SUCCEEDED, record.state());
      assertEquals(3, record.attempts().size());
      assertTrue(record.response().body().length <= ResponseSnapshot.MAX_CAPTURED_BODY);
    }
  }

  @Test
  void failedResponseWithALargeBodyStreamsToTheCaller() throws Exception {
    IdemOkHttp idem = f.idem();
    IdempotentOperation op = IdempotentOperation.of("refused");
    long size = 1024 * 1024;
    try (StreamingBodyServer server = StreamingBodyServer.start(n -> Reply.of(403, size, false))) {
      try (Response response = Fixture.client(idem).newCall(Fixture.order(server.url(), op)).execute()) {
        assertEquals(403, response.code());
        assertEquals(size, response.body().bytes().length, "the captured prefix, then the rest");
      }
      OperationRecord record = f.record(op);
      assertEquals(OperationState.FAILED, record.state());
      assertEquals(0, record.response().body().length);
      assertFalse(record.response().header(ResponseSnapshot.BODY_NOT_KEPT_HEADER).isEmpty());
      assertEquals(1, server.requests());
    }
  }

  /**
   * The call factory's {@code enqueue} (issue 14) takes the same path for bodies: a 3 MB 2xx without
   * a declared length reaches the callback whole, read as it arrives, while the journal keeps none
   * of it. Merged with the streaming work, it first handed the callback the journal's empty copy.
   */
  @Test
  void anEnqueuedCallThroughTheCallFactoryStreamsALargeBodyToItsCallback() throws Exception {
    IdemOkHttp idem = f.idem();
    IdempotentOperation op = IdempotentOperation.of("enqueued");
    long size = 3 * 1024 * 1024;
    try (StreamingBodyServer server = StreamingBodyServer.start(n -> Reply.of(200, size, false))) {
      java.util.concurrent.CompletableFuture<StreamingBodyServer.Received> read =
          new java.util.concurrent.CompletableFuture<>();
      idem.callFactory(Fixture.client(idem)).newCall(Fixture.order(server.url(), op)).enqueue(new okhttp3.Callback() {
        @Override
        public void onFailure(okhttp3.Call call, java.io.IOException e) {
          read.completeExceptionally(e);
        }

        @Override
        public void onResponse(okhttp3.Call call, Response response) {
          try (response; InputStream in = response.body().byteStream()) {
            read.complete(StreamingBodyServer.readAll(in));
          } catch (Throwable e) {
            read.completeExceptionally(e);
          }
        }
      });
      StreamingBodyServer.Received received = read.get(30, TimeUnit.SECONDS);
      assertEquals(size, received.bytes(), "the whole body reached the callback");
      assertEquals(0, received.mismatches(), "the body as the server sent it");
      OperationRecord record = f.record(op);
      assertEquals(OperationState.SUCCEEDED, record.state());
      assertEquals(0, record.response().body().length, "the journal keeps none of a body it did not read");
      assertEquals(1, server.requests());
    }
  }
}
