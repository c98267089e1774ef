package dev.idem.httpclient;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import dev.idem.testkit.StreamingBodyServer;
import dev.idem.testkit.support.HeapLimitedJvm;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/**
 * Run in a child JVM with a small heap by {@link StreamingResponsesTest}: after a small warm-up
 * call, one keyed POST whose 2xx body is far larger than the heap, read by the caller through
 * {@code BodyHandlers.ofInputStream()}. Buffering the body anywhere would end in an
 * OutOfMemoryError; prints what it read, what all threads allocated before the body was
 * read, and what the journal kept.
 */
public final class BoundedHeapChild {
  private BoundedHeapChild() {}

  public static void main(String[] args) throws Exception {
    URI url = URI.create(args[0]);
    InMemoryJournal journal = new InMemoryJournal();
    IdempotentHttpClient client = IdempotentHttpClient.builder(HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1).build())
        .idempotentExecutor(IdempotentExecutor.builder().journal(journal).build()).build();
    HttpRequest request = HttpRequest.newBuilder(url).POST(HttpRequest.BodyPublishers.ofString("{}")).build();
    client.operation("warm-up").send(request, HttpResponse.BodyHandlers.ofByteArray());
    long before = HeapLimitedJvm.allocatedByAllThreads();
    IdempotentHttpResponse<InputStream> response = client.operation("download")
        .send(request, HttpResponse.BodyHandlers.ofInputStream());
    long beforeBody = HeapLimitedJvm.allocatedByAllThreads() - before;
    StreamingBodyServer.Received received;
    try (InputStream in = response.body()) {
      received = StreamingBodyServer.readAll(in);
    }
    OperationRecord record = journal.find(response.operationId()).orElseThrow();
    System.out.println("status=" + record.state() + " read=" + received.bytes() + " mismatches=" + received.mismatches()
        + " allocatedBeforeBody=" + beforeBody + " storedBody=" + record.response().body().length
        + " maxHeap=" + Runtime.getRuntime().maxMemory());
  }
}
