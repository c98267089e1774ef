package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A submitted operation whose target stays unreachable ends FAILED at its age limit, ended by this
 * dispatcher's own delivery (KeyRetention.expireIfDue). Register's Javadoc: callbacks for "the
 * outcomes of the operations this dispatcher delivers ... a callback may see an outcome twice,
 * never zero times". The expiry's exception is built from the journal (fromJournal true), so the
 * delivery takes it as "finished elsewhere": the callbacks are not told, and because the submit
 * left a handle, the receipt is recorded, so OwedOutcomes never hands it over either.
 */
class OutboxAgeLimitCallbackTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, (k, n, t) -> Reply.fail(new ConnectException("Connection refused")));

  @Test
  void anOperationThisDispatcherEndsAtItsAgeLimitReachesTheFailureCallback() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .maxPendingAge(Duration.ofHours(2)).build();
    List<String> told = Collections.synchronizedList(new ArrayList<>());
    List<OperationException> failures = Collections.synchronizedList(new ArrayList<>());
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host, (Outcome o) -> told.add("onSuccess " + o.key()), e -> {
          told.add("onFailure " + e.getClass().getSimpleName());
          failures.add(e);
        }).build().start();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    CompletableFuture<Outcome> handle = outbox.submit(op);

    time.advance(Duration.ofHours(3));  // past the age limit, then well past the lease
    assertEquals(OperationState.FAILED, journal.find(op.id()).orElseThrow().state(), "ended at its age limit");
    assertTrue(handle.isCompletedExceptionally(), "the handle got it");
    time.advance(Duration.ofHours(1));  // OwedOutcomes' lease-age rule has long passed

    assertEquals(1, told.size(), "this dispatcher's own delivery ended the operation FAILED at its age limit,"
        + " yet its failure callback was told " + told.size() + " times: " + told + "; outcomeUndelivered="
        + journal.find(op.id()).orElseThrow().outcomeUndelivered());
    assertTrue(failures.get(0) instanceof OperationFailedException);
    outbox.close();
  }
}
