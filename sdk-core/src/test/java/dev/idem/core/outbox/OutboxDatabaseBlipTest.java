package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.JournalException;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The database is unreachable for a minute while the outbox has nothing queued, then comes back.
 * docs/fleet.md: "one WARN when it goes offline (target or database unreachable) and one INFO when it
 * comes back"; the Javadoc: "the journal cannot be read" is what takes it offline.
 */
class OutboxDatabaseBlipTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));
  private volatile boolean databaseDown;

  private final ForwardingJournal flaky = new ForwardingJournal(journal) {
    @Override
    public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
          int limit) throws IdempotencyException {
      if (databaseDown) {
        throw new JournalException("connection refused", null);
      }
      return super.findDue(now, owner, names, after, limit);
    }
  };

  @Test
  void afterTheDatabaseComesBackTheDispatcherIsOnlineAndASubmitGoesOutAtOnce() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(flaky).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).pollInterval(Duration.ofSeconds(1))
        .maxPollInterval(Duration.ofMinutes(1)).build().start();
    time.advance(Duration.ZERO);

    databaseDown = true;
    time.advance(Duration.ofMinutes(1));
    assertTrue(outbox.isOffline(), "offline while the journal cannot be read");

    databaseDown = false;
    time.advance(Duration.ofMinutes(5));  // several polls read the (empty) journal without a failure

    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    CompletableFuture<Outcome> handle = outbox.submit(op);
    time.advance(Duration.ofSeconds(1));
    assertEquals(1, host.attempts(op.key()), "a submit after the database came back waited for the backed-off"
        + " poll (every " + outbox.currentPollInterval() + ") instead of going out at once");
    assertTrue(handle.isDone());
    assertFalse(outbox.isOffline(), "the database is back and every poll reads it, yet the dispatcher still"
        + " reports offline, polling every " + outbox.currentPollInterval());
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    outbox.close();
  }
}
