package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * OwedOutcomes re-reads each owed outcome just before handing it over. A read that fails there
 * ends the call ("the next one carries on"), but the cursor had already moved past the whole page,
 * so the rest of that page waited a whole pass over the owed outcomes. Three owed outcomes of the
 * earlier incarnation, pageSize 2, the first re-read fails once: the next poll interval hands the
 * rest of that page (and the next page). The failed row itself is passed over, so that a row that
 * fails every time holds up nothing after it (OwedOutcomesUnreadableRowTest), and is retried on the
 * next pass over the owed outcomes.
 */
class OwedOutcomesReadFailureTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal inner = new InMemoryJournal();
  private final Set<OperationId> failOnce = ConcurrentHashMap.newKeySet();
  private final ForwardingJournal journal = new ForwardingJournal(inner) {
    @Override
    public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
      if (failOnce.remove(id)) {
        throw new JournalException("database blip", null);
      }
      return super.find(id);
    }
  };

  private Operation owedUnderPod0(int n) throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
    JournalOps.endedOwed(inner, time, "pod-0", op);
    return op;
  }

  @Test
  void aFailedReadKeepsTheRestOfThePageForTheNextPoll() throws Exception {
    for (int i = 0; i < 3; i++) {
      owedUnderPod0(i);
    }
    List<OperationId> ids = inner.findUndelivered(null, 10).stream().map(OperationRecord::id).toList();
    assertEquals(3, ids.size());
    failOnce.add(ids.get(0));  // the first that OwedOutcomes reads
    List<OperationId> told = Collections.synchronizedList(new ArrayList<>());

    IdempotentExecutor restarted = IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .leaseFor(Duration.ofMinutes(2)).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(restarted).clock(time.clock()).scheduler(time.scheduler())
        .pageSize(2).pollInterval(Duration.ofSeconds(1))
        .registerAsync("create-order", new FakeHost(time, FakeHost.always(201)),
            (Outcome o) -> told.add(o.operationId()), e -> { })
        .build().start();
    time.advance(Duration.ofMillis(500));  // the first poll: the re-read of the first fails
    time.advance(Duration.ofSeconds(1));  // the next sweep

    assertEquals(List.of(ids.get(1), ids.get(2)), List.copyOf(told),
        "the next sweep hands the rest of the page after the failed read; the failed read skipped its page");

    time.advance(Duration.ofSeconds(2));  // the next pass: the end of the owed outcomes, then the start again
    assertEquals(List.of(ids.get(1), ids.get(2), ids.get(0)), List.copyOf(told),
        "the row whose read failed once is handed on the next pass, and each one once");
    outbox.close();
  }
}
