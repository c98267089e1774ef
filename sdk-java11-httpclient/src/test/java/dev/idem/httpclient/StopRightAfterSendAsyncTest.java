package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpClient;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An app submits a keyed {@code sendAsync}, then stops the client: {@code shutdown()} (Java 21's
 * lifecycle, as a framework's graceful stop calls it), or {@code close()} at the end of a
 * try-with-resources block. The JDK contract: a request "previously submitted with send or
 * sendAsync" is run to completion, only new requests are refused. Idem's docs: keyed calls in
 * progress end PENDING with their keys, for a resume or an OutboxDispatcher; only a keyed call
 * made after the shutdown fails with an IOException, nothing journaled or sent.
 *
 * <p>Since keyed {@code sendAsync} reads its body and begins its operation on the client's
 * executor (or Idem's own threads), {@code sendAsync} returns before anything is journaled; a stop
 * that lands in that window (the app client's executor has not run the task yet; here a queue the
 * test drains, to make the window deterministic) refuses the call as if it had been made after the
 * stop: the future fails, and the operation is in no journal, so no resume or outbox will ever
 * send it. An app that relies on the journal (fire, then stop) loses the effect.
 */
class StopRightAfterSendAsyncTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  private static void drain(Queue<Runnable> queued) {
    Runnable task;
    while ((task = queued.poll()) != null) {
      task.run();
    }
  }

  private static Throwable failure(CompletableFuture<?> future) throws Exception {
    try {
      future.get(5, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return e.getCause();
    }
    throw new AssertionError("the call completed normally");
  }

  @Test
  void aCallSubmittedBeforeShutdownEndsPendingWithItsKey() throws Exception {
    IdempotentServer server = serverExtension.server(); // never reached: nothing is sent
    Queue<Runnable> queued = new ArrayDeque<>();
    HttpClient app = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(queued::add).build();
    Fixture f = new Fixture();
    IdempotentHttpClient client = IdempotentHttpClient.builder(app).idempotentExecutor(f.executor).build();
    OperationCall call = client.operation("create-order");
    OperationId id = call.operationId();
    CompletableFuture<IdempotentHttpResponse<String>> future =
        call.sendAsync(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());

    client.shutdown(); // after sendAsync returned: this call was submitted before it
    drain(queued);

    Optional<OperationRecord> record = f.executor.find(id);
    assertTrue(record.isPresent(), "a keyed sendAsync submitted before shutdown() was never journaled, so no"
        + " resume or outbox will send it; the caller was told: " + (future.isDone() ? failure(future) : "nothing yet"));
    assertFalse(record.get().state().isTerminal(), "resumable with its key: " + record.get().state());
    assertInstanceOf(OperationPendingException.class, failure(future));
  }

  @Test
  void aCallSubmittedBeforeCloseEndsPendingWithItsKey() throws Exception {
    IdempotentServer server = serverExtension.server(); // never reached: nothing is sent
    Queue<Runnable> queued = new ArrayDeque<>();
    HttpClient app = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(queued::add).build();
    InMemoryJournal journal = new InMemoryJournal();
    // create(HttpClient, Journal): the client makes the executor, and close() closes it; "keyed
    // calls in progress end PENDING with their keys when close ends what they go through".
    IdempotentHttpClient client = IdempotentHttpClient.create(app, journal);
    OperationCall call = client.operation("create-order");
    OperationId id = call.operationId();
    CompletableFuture<IdempotentHttpResponse<String>> future =
        call.sendAsync(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());

    client.close(); // the end of a try-with-resources block, right after the call was made
    drain(queued);

    Optional<OperationRecord> record = journal.find(id);
    assertTrue(record.isPresent(), "a keyed sendAsync submitted before close() was never journaled, so no"
        + " resume or outbox will send it; the caller was told: " + (future.isDone() ? failure(future) : "nothing yet"));
    assertFalse(record.get().state().isTerminal(), "resumable with its key: " + record.get().state());
    assertInstanceOf(OperationPendingException.class, failure(future));
  }
}
