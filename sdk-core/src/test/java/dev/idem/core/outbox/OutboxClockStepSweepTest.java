package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The sweep that completes handles of operations finished elsewhere now runs "at most once per
 * poll interval", gated on the wall clock ({@code nextSweep}), while the polls themselves are
 * scheduled by delay. A wall clock that steps back (an NTP correction; the default clock is
 * {@link Clock#systemUTC()}) leaves {@code nextSweep} in the future by the size of the step: the
 * polls go on every second, but no handle settles, and no owed outcome is handed over, until the
 * clock catches up again. Before, every poll swept.
 */
class OutboxClockStepSweepTest extends WallClockStepFixture {
  OutboxClockStepSweepTest() {
    super(FakeHost.always(201));
  }

  @Test
  void aHandleOnAnOperationFinishedInlineCompletesAtTheNextPollsAfterTheWallClockStepsBack() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).owner("pod-0").clock(wall)
        .scheduler(time.scheduler()).sleeper(time.sleeper()).asyncExecutor(Runnable::run).random(() -> 0.5).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(wall).scheduler(time.scheduler())
        .pollInterval(Duration.ofSeconds(1)).registerAsync("send-mail", host).build().start();
    time.advance(Duration.ZERO);  // the first poll sweeps, and sets the next sweep a second ahead

    step = Duration.ofHours(-1);  // NTP steps the host's clock back an hour
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    idem.enqueue(op);
    CompletableFuture<Outcome> handle = outbox.await(op.id());
    idem.resume(op.id(), host);  // delivered inline by the app
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());

    time.advance(Duration.ofMinutes(1));  // sixty polls

    assertTrue(handle.isDone(), "the operation SUCCEEDED a minute ago and the dispatcher polled every second,"
        + " but after the wall clock stepped back an hour no poll swept the handles: the handle stays open until"
        + " the clock catches up");
    outbox.close();
  }
}
