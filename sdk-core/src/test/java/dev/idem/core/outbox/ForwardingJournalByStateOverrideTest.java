package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The drain check of {@code shutdown(timeout)} reads {@code findByState(state, names, after,
 * limit)}, which {@link ForwardingJournal} does not forward (as the names overload of
 * {@code findDue}): its default runs the subclass's {@code findByState(state, after, limit)}, so a
 * wrapper written against that method (to count, time or fail the reads) still sees the drain's.
 */
class ForwardingJournalByStateOverrideTest {
  private final VirtualTime time = new VirtualTime();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));
  private final AtomicBoolean draining = new AtomicBoolean();
  private final Set<OperationState> readWhileDraining = ConcurrentHashMap.newKeySet();

  private final ForwardingJournal observed = new ForwardingJournal(new InMemoryJournal()) {
    @Override
    public List<OperationRecord> findByState(OperationState state, OperationId after, int limit)
        throws IdempotencyException {
      if (draining.get()) {
        readWhileDraining.add(state);
      }
      return super.findByState(state, after, limit);
    }
  };

  @Test
  void aWrapperOverridingTheByStateReadSeesTheDrainCheck() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(observed).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build();
    outbox.submit(Operation.builder("create-order", Requests.order("{\"n\":1}")).build());
    outbox.start();
    time.runDueTasks();  // the first poll reads by state too (DueDeadlines), before the drain

    draining.set(true);
    CompletableFuture<Boolean> drained = outbox.shutdown(Duration.ofMinutes(5));
    time.advance(Duration.ofSeconds(10));

    assertTrue(drained.isDone() && drained.join(), "drained");
    assertEquals(Set.of(OperationState.PENDING, OperationState.IN_FLIGHT), readWhileDraining,
        "the drain check's reads by state, as the ForwardingJournal subclass's override saw them");
  }
}
