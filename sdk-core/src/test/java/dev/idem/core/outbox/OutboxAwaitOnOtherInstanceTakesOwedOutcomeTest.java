package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.Outcome;
import dev.idem.core.spi.Journal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/fleet.md: "An outbox handle on an operation whose name has callbacks never takes its outcome
 * from them: on whichever instance it was submitted or awaited, only a callback's having been told
 * is recorded." {@code await}'s Javadoc: it completes "whoever delivers the operation: this
 * dispatcher (if a transport is registered for its name), an inline caller, or another process",
 * and "An outcome owed to the name's callbacks stays owed to them". Register's Javadoc: a callback
 * sees an outcome "twice, never zero times".
 *
 * <p>Pod-a delivers create-order and stops before telling its callbacks: the outcome is owed. A
 * web instance (pod-web) whose dispatcher does not deliver create-order itself awaits the
 * operation by id: its tracker only knows the callbacks of the names it registered, so
 * {@code DeliveryTracker.handOver} takes the outcome as the handle's and records it as received.
 * Pod-c, which registers create-order with callbacks, then never hands it to them: told zero
 * times.
 */
class OutboxAwaitOnOtherInstanceTakesOwedOutcomeTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));
  private final List<String> told = Collections.synchronizedList(new ArrayList<>());
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();

  private IdempotentExecutor executor(String owner, Journal j) {
    return IdempotentExecutor.builder().journal(j).owner(owner).clock(time.clock()).scheduler(time.scheduler())
        .sleeper(time.sleeper()).asyncExecutor(Runnable::run).random(() -> 0.5).leaseFor(Duration.ofMinutes(2))
        .build();
  }

  @Test
  void anAwaitOnAnInstanceThatDoesNotDeliverTheNameLeavesTheOutcomeForTheCallbacks() throws Exception {
    IdempotentExecutor podA = executor("pod-a", journal);
    podA.enqueue(op);
    podA.resume(op.id(), host);  // SUCCEEDED; pod-a stops before its callback
    assertTrue(journal.find(op.id()).orElseThrow().outcomeUndelivered());

    OutboxDispatcher web = OutboxDispatcher.builder(executor("pod-web", journal)).clock(time.clock())
        .scheduler(time.scheduler()).registerAsync("send-email", host).build().start();
    OutboxDispatcher podC = OutboxDispatcher.builder(executor("pod-c", journal)).clock(time.clock())
        .scheduler(time.scheduler())
        .registerAsync("create-order", host, (Outcome o) -> told.add("onSuccess " + o.operationId()),
            e -> told.add("onFailure " + e)).build().start();

    assertEquals(op.key(), web.await(op.id()).get().key(), "the awaiter gets the outcome");
    time.advance(Duration.ofMinutes(10));  // well past pod-a's lease

    assertEquals(List.of("onSuccess " + op.id()), told, "pod-c's create-order callbacks were owed the outcome,"
        + " but the await on pod-web recorded it as received: outcomeUndelivered="
        + journal.find(op.id()).orElseThrow().outcomeUndelivered());
    web.close();
    podC.close();
  }
}
