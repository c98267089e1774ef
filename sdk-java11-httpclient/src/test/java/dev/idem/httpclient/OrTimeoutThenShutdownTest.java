package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpClient;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An app bounds a keyed {@code sendAsync} with {@code future.orTimeout(...)}, the usual way to put
 * a deadline on a CompletableFuture. The timeout fires while the operation waits out a backoff
 * after a 503: it completes the caller's future exceptionally (a TimeoutException), which is not a
 * cancel, so the engine drops the call from the calls {@code shutdown()} stops, but leaves its
 * execution running. The app then shuts the client down (ordinary process stop). The docs promise
 * that shutdown ends keyed calls PENDING with their keys, never FAILED; the orphaned execution's
 * next attempts are refused by {@code LiveTransport} as "not sent" (the executor's future was
 * never cancelled) and retried until the attempts run out: FAILED for good, although the server
 * only asked for a retry. A resume or an outbox will never send it again.
 */
class OrTimeoutThenShutdownTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @Test
  void aTimedOutFutureThenShutdownLeavesTheOperationPendingNotFailed() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    // A client of its own: on Java 21+ shutdown() shuts the wrapped client down, and Fixture.JDK
    // is every other test's.
    HttpClient own = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    IdempotentHttpClient client = IdempotentHttpClient.builder(own).idempotentExecutor(f.executor).build();
    server.plan().forNext(1, Fault.status(503));
    OperationCall call = client.operation("create-order");
    OperationId id = call.operationId();
    CompletableFuture<IdempotentHttpResponse<String>> future =
        call.sendAsync(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (f.time.pendingTasks() == 0) { // the 503 was classified and a retry scheduled
      assertTrue(System.nanoTime() < deadline, "no retry was scheduled");
      Thread.onSpinWait();
    }

    // What future.orTimeout(...) does when its time is up (CompletableFuture's own Timeout task).
    assertTrue(future.completeExceptionally(new TimeoutException()));
    client.shutdown(); // Java 17: stops the keyed calls only; on 21+ also the wrapped client

    // Let virtual time run what is still scheduled.
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    int quiet = 0; // idle rounds with nothing scheduled and the operation PENDING
    while (System.nanoTime() < end && !f.record(id).state().isTerminal() && quiet < 200) {
      if (f.time.runNextTask()) {
        quiet = 0;
      } else {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        quiet = f.record(id).state() == OperationState.PENDING && f.time.pendingTasks() == 0 ? quiet + 1 : 0;
      }
    }
    assertEquals(1, server.requestCount(), "nothing more was sent after the shutdown");
    assertEquals(OperationState.PENDING, f.record(id).state(),
        "shutdown() must leave a keyed call PENDING with its key; the journal now says "
            + f.record(id).state() + " after " + f.record(id).attempts().size() + " attempts");
  }
}
