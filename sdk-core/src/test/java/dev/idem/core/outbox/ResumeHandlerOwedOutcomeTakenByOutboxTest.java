package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.resume.ResumeHandler;
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
 * ResumeHandler's Javadoc: "resumePending first hands over what the journal still owes: the outcome
 * of a queued operation ... that ended without any handler or outbox awaiter being recorded as having
 * received it, because the process stopped between the terminal write and the callback". README:
 * "the next resumePending hands over any that a crash kept from you". journal.md tells of the app
 * "down over a weekend" whose handler was never told that the order was charged.
 *
 * <p>A fleet as the README builds it: the outbox quickstart registers "create-order" without
 * callbacks, and "Resume after a restart" runs resumePending with a "create-order" handler at
 * start-up. pod-0 crashes between the terminal write and its handler; pod-1, alive, runs a dispatcher.
 * Since a0b15a03, pod-1's OwedOutcomes records pod-0's owed outcome as received once it is older than
 * the lease, so when pod-0 comes back on Monday and runs resumePending (before starting its own
 * dispatcher, the order journal.md asks for) the handler is never told: zero times.
 */
class ResumeHandlerOwedOutcomeTakenByOutboxTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  private IdempotentExecutor executor(String owner) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .leaseFor(Duration.ofMinutes(2)).build();
  }

  @Test
  void theRestartedInstancesResumeHandlerIsToldOfTheOrderItsCrashKeptFromIt() throws Exception {
    // pod-1: the README's outbox quickstart, running all weekend.
    OutboxDispatcher pod1 = OutboxDispatcher.builder(executor("pod-1")).clock(time.clock())
        .scheduler(time.scheduler()).registerAsync("create-order", host).build().start();

    // pod-0: the order is charged (SUCCEEDED written), then pod-0 dies before its handler ran.
    Operation order = Operation.builder("create-order", Requests.order("{\"cart\":42}")).build();
    executor("pod-0").enqueue(order);
    Lease lease = journal.claim(order.id(), "pod-0", time.now(), Duration.ofMinutes(2)).orElseThrow();
    journal.transition(order.id(), lease, Transition.finish(OperationState.SUCCEEDED, time.now(),
        FakeHost.response(201, Map.of()), "201"));

    time.advance(Duration.ofDays(2));  // the weekend

    // Monday: pod-0 restarts under its stable name and resumes, as the README shows.
    List<OperationId> confirmed = Collections.synchronizedList(new ArrayList<>());
    executor("pod-0").resumePending(Map.of("create-order",
        ResumeHandler.of(host, (Outcome o) -> confirmed.add(o.operationId()), failure -> { })));

    assertEquals(List.of(order.id()), confirmed, "the resume handler was never told that the order was charged:"
        + " pod-1's dispatcher, which registers create-order without callbacks, recorded pod-0's owed outcome as"
        + " received (outcome_delivered_at set: " + !journal.find(order.id()).orElseThrow().outcomeUndelivered() + ")");
    assertEquals(0, host.totalAttempts(), "nothing sent");
    pod1.close();
  }
}
