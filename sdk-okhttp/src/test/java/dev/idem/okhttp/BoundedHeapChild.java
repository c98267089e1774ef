package dev.idem.okhttp;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import java.io.InputStream;
import java.net.URI;
import dev.idem.testkit.StreamingBodyServer;
import dev.idem.testkit.support.HeapLimitedJvm;
import okhttp3.OkHttpClient;
import okhttp3.Response;

/**
 * Run in a child JVM with a small heap by {@link StreamingResponsesTest}: one keyed POST whose 2xx
 * body is far larger than the heap, read by the caller as a stream (after a small warm-up call). Buffering the body anywhere
 * would end in an OutOfMemoryError; prints what it read, what all threads allocated before
 * the body was read, and what the journal kept.
 */
public final class BoundedHeapChild {
  private BoundedHeapChild() {}

  public static void main(String[] args) throws Exception {
    URI url = URI.create(args[0]);
    InMemoryJournal journal = new InMemoryJournal();
    IdemOkHttp idem = IdemOkHttp.builder(IdempotentExecutor.builder().journal(journal).build()).build();
    OkHttpClient client = Fixture.client(idem);
    // A first call loads and initializes the classes, so that the figure below is the call's own.
    try (Response warmUp = client.newCall(Fixture.order(url, IdempotentOperation.of("warm-up"))).execute()) {
      warmUp.body().bytes();
    }
    IdempotentOperation op = IdempotentOperation.of("download");
    long before = HeapLimitedJvm.allocatedByAllThreads();
    long beforeBody;
    StreamingBodyServer.Received received;
    try (Response response = client.newCall(Fixture.order(url, op)).execute();
        InputStream in = response.body().byteStream()) {
      beforeBody = HeapLimitedJvm.allocatedByAllThreads() - before;
      received = StreamingBodyServer.readAll(in);
    }
    OperationRecord record = journal.find(op.id()).orElseThrow();
    System.out.println("status=" + record.state() + " read=" + received.bytes() + " mismatches=" + received.mismatches()
        + " allocatedBeforeBody=" + beforeBody + " storedBody=" + record.response().body().length
        + " maxHeap=" + Runtime.getRuntime().maxMemory());
  }
}
