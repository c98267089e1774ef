package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * README: a running OutboxDispatcher hands the outcomes a crash kept from you "to the outcome
 * callbacks of their name (its own owner name's at its first poll ...)"; docs/fleet.md: "its own
 * owner name's at that first poll"; register's Javadoc: "at the first poll if it was written under
 * the executor's own owner name by an earlier incarnation".
 *
 * <p>OwedOutcomes reads one page of {@code findUndelivered} per poll interval and skips what it
 * does not take, among them the owed outcomes of names registered without callbacks, which no
 * dispatcher ever records and purge keeps for good (OwedOutcomesTest: "still owed, to
 * resumePending's handlers"; the Spring starter registers every name that way and does not run
 * resumePending). Those accumulate ahead of the callbacks' outcome in identity order ("audit" sorts
 * before "create-order"), so the earlier incarnation's outcome waits one poll interval per page
 * of them, not the first poll. Here 6 such rows and pageSize 2: the third sweep.
 */
class OwedOutcomesFirstPollTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  /** The earlier incarnation pod-0 journals a SUCCEEDED outcome of {@code name} and dies before its record. */
  private Operation owedUnderPod0(String name, int n) throws Exception {
    Operation op = Operation.builder(name, Requests.order("{\"n\":" + n + "}")).build();
    IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(time.clock()).build().enqueue(op);
    Lease lease = journal.claim(op.id(), "pod-0", time.now(), Duration.ofMinutes(2)).orElseThrow();
    journal.transition(op.id(), lease, Transition.finish(OperationState.SUCCEEDED, time.now(),
        FakeHost.response(201, Map.of()), "201"));
    assertTrue(journal.find(op.id()).orElseThrow().outcomeUndelivered());
    return op;
  }

  @Test
  void theEarlierIncarnationsOwedOutcomeReachesTheCallbacksAtTheFirstPoll() throws Exception {
    for (int i = 0; i < 6; i++) {
      owedUnderPod0("audit", i);
    }
    Operation order = owedUnderPod0("create-order", 100);
    List<String> told = Collections.synchronizedList(new ArrayList<>());

    IdempotentExecutor restarted = IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .leaseFor(Duration.ofMinutes(2)).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(restarted).clock(time.clock()).scheduler(time.scheduler())
        .pageSize(2).pollInterval(Duration.ofSeconds(1))
        .registerAsync("audit", host)
        .registerAsync("create-order", host, (Outcome o) -> told.add("onSuccess " + o.operationId()),
            e -> told.add("onFailure " + e))
        .build().start();
    time.advance(Duration.ofMillis(500));  // the first poll, and no other

    assertEquals(List.of("onSuccess " + order.id()), told, "the earlier incarnation's outcome was not handed at"
        + " the first poll: OwedOutcomes spent it on a page of owed outcomes of a name without callbacks");
    outbox.close();
  }
}
