package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

/**
 * A live holder whose wall clock stepped back is not taken over beside its own attempt. Review rstep
 * proved this against a takeover counted on the claimant's scheduler (a LeaseWatch, tried for
 * DueDeadlinesReviewTest's disabled case and not landed): a live holder judges its own lease on its
 * wall clock. An outbox dispatcher with a synchronous transport claims an operation, then queues the
 * attempt for a worker; {@code WorkerPoolTransport} refuses to send an attempt that waited half the
 * lease or more, measuring the wait on the wall clock, which after a step back of an hour reads
 * negative: the holder sends however long it waited. That is safe only while nobody else may take
 * the lease before the wall clock reaches its journaled expiry, which this test keeps true: pod-0,
 * running through the step, must not send while pod-1's queued attempt may still go out.
 */
class RvrstepLiveHolderWaitingForWorkerTest extends WallClockStepFixture {
  RvrstepLiveHolderWaitingForWorkerTest() {
    super(FakeHost.always(201));
  }

  @Test
  void aLiveHolderWhoseAttemptWaitsForAWorkerAcrossTheStepIsNotSentBesideTheTakeover() throws Exception {
    // pod-1: synchronous transport, its one worker busy (the test runs its queue by hand).
    Queue<Runnable> pod1Workers = new ArrayDeque<>();
    Executor busyPool = pod1Workers::add;
    IdempotentExecutor pod1 = executor("pod-1");
    OutboxDispatcher holder = OutboxDispatcher.builder(pod1).clock(wall).scheduler(time.scheduler())
        .pollInterval(Duration.ofSeconds(1)).maxPollInterval(Duration.ofSeconds(1))
        .register("create-order", host).workers(busyPool).build().start();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":9}")).build();
    holder.submit(op);
    time.advance(Duration.ofSeconds(2));
    OperationRecord claimed = record(op);
    assertEquals(OperationState.IN_FLIGHT, claimed.state());
    assertEquals("pod-1", claimed.owner());
    assertEquals(1, pod1Workers.size(), "pod-1's attempt waits for a worker");
    assertEquals(0, host.totalAttempts());

    // NTP steps this host's clock back an hour; pod-0's dispatcher (async transport) is running.
    host.behave((key, n, now) -> Reply.hang());
    step = Duration.ofHours(-1);
    IdempotentExecutor pod0 = executor("pod-0");
    OutboxDispatcher outbox = outbox(pod0).start();
    time.advance(Duration.ofMinutes(3));

    // pod-1's worker is free at last: its attempt waited 3 minutes, more than half its lease.
    host.behave((key, n, now) -> Reply.status(201));
    pod1Workers.remove().run();
    time.advance(Duration.ofSeconds(1));

    assertEquals(1, host.maxConcurrent(), "two attempts of key " + op.key() + " on the wire at once: pod-0 took"
        + " over live pod-1's lease after 2 min on its scheduler and sent, and pod-1's worker, which measures its"
        + " wait on the stepped wall clock, sent too after 3 min; attempts " + host.totalAttempts() + ", journal "
        + record(op).attempts());
    holder.close();
    outbox.close();
    pod1.close();
    pod0.close();
  }
}
