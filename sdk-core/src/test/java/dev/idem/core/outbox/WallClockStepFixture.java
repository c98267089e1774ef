package dev.idem.core.outbox;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.support.FakeHost;
import dev.idem.core.testing.VirtualTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * The setup the outbox's wall-clock-step tests share: virtual time, an in-memory journal, a host
 * that answers as each test says, and a wall clock that is the virtual time plus {@link #step}, so a
 * test steps the clock (an NTP correction) while the scheduler's time goes on undisturbed.
 */
abstract class WallClockStepFixture {
  final VirtualTime time = new VirtualTime();
  final InMemoryJournal journal = new InMemoryJournal();
  final FakeHost host;
  /** How far the wall clock is from the virtual time; a test sets it to step the clock. */
  volatile Duration step = Duration.ZERO;

  /** The host's wall clock: the virtual time, stepped by {@link #step}. */
  final Clock wall = new Clock() {
    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return time.now().plus(step);
    }
  };

  WallClockStepFixture(FakeHost.Behaviour host) {
    this.host = new FakeHost(time, host);
  }

  /** An executor on the wall clock and the virtual scheduler, with no circuit breaker in the way. */
  IdempotentExecutor executor(String owner) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).clock(wall).scheduler(time.scheduler())
        .sleeper(time.sleeper()).random(() -> 0.5).circuitBreaker(CircuitBreakerSettings.disabled())
        .asyncExecutor(Runnable::run).build();
  }

  /** Polls every second, backed off or not: what is left is the wait for the operation's due time. */
  OutboxDispatcher outbox(IdempotentExecutor idem) {
    return OutboxDispatcher.builder(idem).clock(wall).scheduler(time.scheduler()).pollInterval(Duration.ofSeconds(1))
        .maxPollInterval(Duration.ofSeconds(1)).registerAsync("create-order", host).build();
  }

  OperationRecord record(Operation op) throws Exception {
    return journal.find(op.id()).orElseThrow();
  }
}
