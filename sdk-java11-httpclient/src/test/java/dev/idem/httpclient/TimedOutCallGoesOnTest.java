package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What {@code orTimeout} on a keyed {@code sendAsync} future means, as documented on
 * {@link OperationCall#sendAsync}: the caller stops waiting, the operation does not stop. As with
 * the JDK client's own future, only a cancel stops the exchange; the execution goes on in the
 * background, with the same key, and the journal may end SUCCEEDED although the caller saw a
 * TimeoutException. (Shut down meanwhile, it ends PENDING: {@link OrTimeoutThenShutdownTest}.)
 */
class TimedOutCallGoesOnTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @Test
  void theExecutionGoesOnAfterTheCallersFutureTimedOutAndCanSucceed() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    server.plan().forNext(1, Fault.status(503));
    OperationCall call = f.client.operation("create-order");
    OperationId id = call.operationId();
    CompletableFuture<IdempotentHttpResponse<String>> future =
        call.sendAsync(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (f.time.pendingTasks() == 0) { // the 503 was classified and a retry scheduled
      assertTrue(System.nanoTime() < deadline, "no retry was scheduled");
      Thread.onSpinWait();
    }

    // What future.orTimeout(...) does when its time is up.
    assertTrue(future.completeExceptionally(new TimeoutException()));
    ExecutionException told = assertThrows(ExecutionException.class, () -> future.get(1, TimeUnit.SECONDS));
    assertInstanceOf(TimeoutException.class, told.getCause());

    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!f.record(id).state().isTerminal()) {
      assertTrue(System.nanoTime() < end, "the execution did not go on: " + f.record(id).state());
      if (!f.time.runNextTask()) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      }
    }
    assertEquals(OperationState.SUCCEEDED, f.record(id).state(), "the retry went out in the background");
    assertEquals(1, server.effectCount(call.key().value()));
    Fixture.assertKeyOnEveryRequest(server, call.key(), 2);
  }
}
