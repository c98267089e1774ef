package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A rolling deploy of a fleet (docs/fleet.md, docs/spring.md "Shutdown": the outbox drains for up to
 * idem.shutdown-timeout). Instance b stops while instance a, alive and staying, has one attempt on
 * the wire under its own lease. b has nothing of its own to deliver, yet its drain looks at the
 * whole journal, so it cannot finish while a works: b's shutdown waits its whole timeout and
 * reports that the queue did not drain.
 */
class OutboxFleetDrainTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor(String owner) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
  }

  @Test
  void anInstanceWithNothingInDeliveryDrainsWithoutWaitingForAnotherLiveInstancesWork() throws Exception {
    FakeHost slow = new FakeHost(time, (key, n, now) -> Reply.hang());  // a's call takes its time
    OutboxDispatcher a = OutboxDispatcher.builder(executor("pod-a")).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", slow).build().start();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    a.submit(op);
    time.advance(Duration.ZERO);
    assertEquals(OperationState.IN_FLIGHT, journal.find(op.id()).orElseThrow().state());

    OutboxDispatcher b = OutboxDispatcher.builder(executor("pod-b")).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", new FakeHost(time, FakeHost.always(201))).build().start();
    time.advance(Duration.ofSeconds(1));
    assertEquals(0, b.inDelivery(), "b delivers nothing: a holds the only operation");

    CompletableFuture<Boolean> drained = b.shutdown(Duration.ofSeconds(20));
    time.advance(Duration.ofSeconds(2));

    assertTrue(drained.isDone(), "b had nothing in delivery, yet its drain is still waiting for pod-a's operation"
        + " (it will wait out the whole 20 s shutdown timeout and report false)");
    assertTrue(drained.get());
    a.close();
  }
}
