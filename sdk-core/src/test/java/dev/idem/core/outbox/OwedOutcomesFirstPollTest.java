package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.Outcome;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.JournalOps;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * README: a running OutboxDispatcher hands the outcomes a crash kept from you to the outcome
 * callbacks of their name, its own owner name's from its first poll on, within
 * ceil(backlog / pageSize) poll intervals, where the backlog is the owed outcomes sorting ahead of
 * it that this dispatcher does not take; docs/fleet.md and register's Javadoc say the same.
 *
 * <p>OwedOutcomes reads one page of {@code findUndelivered} per poll interval, after the poll's
 * deliveries started, and skips what it does not take, among them the owed outcomes of names
 * registered without callbacks, which stay owed for a resume handler. Reading every page at the
 * first poll (a0b15a03) held up the first deliveries of a restart behind the whole backlog
 * (OwedBacklogStallsFirstDeliveriesTest), so "at the first poll" cannot hold when such a backlog
 * sorts first ("audit" sorts before "create-order"). Here 6 such rows and pageSize 2: the earlier
 * incarnation's outcome is handed within 3 poll intervals of the first poll, once, and not never.
 */
class OwedOutcomesFirstPollTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  /** The earlier incarnation pod-0 journals a SUCCEEDED outcome of {@code name} and dies before its record. */
  private Operation owedUnderPod0(String name, int n) throws Exception {
    Operation op = Operation.builder(name, Requests.order("{\"n\":" + n + "}")).build();
    JournalOps.endedOwed(journal, time, "pod-0", op);
    assertTrue(journal.find(op.id()).orElseThrow().outcomeUndelivered());
    return op;
  }

  @Test
  void theEarlierIncarnationsOwedOutcomeReachesTheCallbacksWithinOnePollIntervalPerPageOfBacklog() throws Exception {
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
    time.advance(Duration.ofMillis(500));  // the first poll
    for (int i = 0; i < 3; i++) {  // ceil(6 owed rows skipped / pageSize 2) poll intervals
      time.advance(Duration.ofSeconds(1));
    }

    assertEquals(List.of("onSuccess " + order.id()), told, "the earlier incarnation's outcome was not handed within"
        + " ceil(backlog / pageSize) poll intervals of the first poll");
    assertFalse(journal.find(order.id()).orElseThrow().outcomeUndelivered(), "recorded as received");
    outbox.close();
  }
}
