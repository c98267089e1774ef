package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.JournalException;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.JournalOps;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * OwedOutcomes re-reads each owed outcome just before handing it over, and a failed re-read ends
 * the call with the cursor at that row, so that the next call starts with it. A row whose re-read
 * fails every time (a row the journal cannot decode, say) then holds the cursor for good: every
 * owed outcome sorting after it is never handed to the callbacks, though the journal reads them
 * fine. Three owed outcomes of the earlier incarnation, pageSize 2, the first one unreadable: the
 * other two must still reach the callbacks.
 */
class OwedOutcomesUnreadableRowTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal inner = new InMemoryJournal();
  private volatile OperationId unreadable;
  private final ForwardingJournal journal = new ForwardingJournal(inner) {
    @Override
    public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
      if (id.equals(unreadable)) {
        throw new JournalException("row cannot be decoded", null);
      }
      return super.find(id);
    }
  };

  private void owedUnderPod0(int n) throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
    JournalOps.endedOwed(inner, time, "pod-0", op);
  }

  @Test
  void aRowThatCannotBeReadDoesNotHoldUpTheOwedOutcomesAfterIt() throws Exception {
    for (int i = 0; i < 3; i++) {
      owedUnderPod0(i);
    }
    List<OperationId> ids = inner.findUndelivered(null, 10).stream().map(OperationRecord::id).toList();
    assertEquals(3, ids.size());
    unreadable = ids.get(0);  // the first that OwedOutcomes reads, every pass
    List<OperationId> told = Collections.synchronizedList(new ArrayList<>());

    IdempotentExecutor restarted = IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .leaseFor(Duration.ofMinutes(2)).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(restarted).clock(time.clock()).scheduler(time.scheduler())
        .pageSize(2).pollInterval(Duration.ofSeconds(1))
        .registerAsync("create-order", new FakeHost(time, FakeHost.always(201)),
            (Outcome o) -> told.add(o.operationId()), e -> { })
        .build().start();
    time.advance(Duration.ofSeconds(10));  // ten sweeps

    assertEquals(List.of(ids.get(1), ids.get(2)), List.copyOf(told), "the owed outcomes after the unreadable row"
        + " never reached the callbacks: the cursor stays at the row whose re-read fails");
    assertTrue(inner.find(ids.get(0)).orElseThrow().outcomeUndelivered(), "the unreadable one stays owed");
    outbox.close();
  }
}
