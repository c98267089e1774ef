package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code cancel(true)} of a {@code sendAsync} future while the call waits out a long backoff (a
 * 503 with {@code Retry-After: 60}): the future is cancelled at once, the backoff's timer with it,
 * so no further attempt goes out however long the clock then runs; the operation stays PENDING
 * with its one attempt and its key, and a resume sends that key. The same through the plain
 * {@code sendAsync} of an untagged POST under {@code FRESH_KEY}, whose future wraps the keyed
 * one. (The blocking twin, a stop of the client during a backoff, is
 * {@link StopWakesBlockingBackoffTest}.)
 */
class CancelAsyncDuringBackoffTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @Test
  void cancelTrueOfAKeyedCallDuringItsBackoffStopsItAtOnceAndLeavesItPendingWithItsKey() throws Exception {
    IdempotentServer server = serverExtension.server();
    server.plan().next(Fault.status(503).withHeader("Retry-After", "60"));
    Fixture f = new Fixture();
    OperationCall call = f.client.operation("create-order");
    CompletableFuture<IdempotentHttpResponse<String>> future =
        call.sendAsync(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());

    assertCancelledDuringBackoffEndsPending(f, server, future, call.operationId());
  }

  @Test
  void cancelTrueOfAPlainSendAsyncWithAFreshKeyDuringItsBackoffDoesTheSame() throws Exception {
    IdempotentServer server = serverExtension.server();
    server.plan().next(Fault.status(503).withHeader("Retry-After", "60"));
    Fixture f = new Fixture(b -> { }, c -> c.untaggedPolicy(UntaggedPolicy.FRESH_KEY));
    CompletableFuture<HttpResponse<String>> future =
        f.client.sendAsync(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());
    awaitBackoff(f);
    OperationRecord pending = f.journal.findByState(OperationState.PENDING, null, 10).get(0);

    assertCancelledDuringBackoffEndsPending(f, server, future, pending.id());
  }

  private static void assertCancelledDuringBackoffEndsPending(Fixture f, IdempotentServer server,
      CompletableFuture<? extends HttpResponse<String>> future, OperationId id) throws Exception {
    awaitBackoff(f);
    assertEquals(1, f.time.scheduledDelays().size());
    assertTrue(f.time.scheduledDelays().get(0).compareTo(Duration.ofSeconds(10)) >= 0,
        "Retry-After: 60 (capped at maxDelay) sets the wait: " + f.time.scheduledDelays());

    assertTrue(future.cancel(true));

    assertTrue(future.isCancelled());
    assertEquals(0, f.time.pendingTasks(), "the backoff's timer was cancelled with the call");
    f.time.advance(Duration.ofMinutes(5)); // far past the Retry-After: nothing is left to run
    OperationRecord record = f.record(id);
    assertEquals(OperationState.PENDING, record.state(), "attempts: " + record.attempts());
    assertEquals(1, record.attempts().size(), "no attempt after the cancel; attempts: " + record.attempts());
    Fixture.assertKeyOnEveryRequest(server, id.key(), 1);
    assertInstanceOf(java.util.concurrent.CancellationException.class,
        future.handle((r, e) -> e).get(1, TimeUnit.SECONDS));

    Outcome resumed = f.executor.resume(id, f.client.resumeTransport());
    assertEquals(201, resumed.response().status());
    Fixture.assertKeyOnEveryRequest(server, id.key(), 2);
    assertEquals(1, server.effectCount(id.key().value()));
  }

  /** Waits (in real time, bounded) until the 503 arrived and the async backoff is scheduled. */
  private static void awaitBackoff(Fixture f) {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (f.time.pendingTasks() == 0 && System.nanoTime() < end) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
    }
    assertEquals(1, f.time.pendingTasks(), "the 503 arrived and the backoff was scheduled");
  }
}
