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
import dev.idem.core.spi.Journal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: an outbox delivery's
 * first claim is fenced on the record it read ({@code AttemptLoop.fenceFirstClaimOn}).
 *
 * <p>Review (core2) of 4ffc716d: the fix for "a delivery from a stale due page ignores another
 * instance's backoff" is a check, then an unfenced claim. IdempotentExecutor.resumeAsyncCounted
 * reads the record again ({@code journal.find}), compares state and generation with the due page's,
 * and then runAsync's AttemptLoop claims with {@code Journal.claim}, which takes any PENDING
 * operation whatever its next attempt time. Another instance that claims, sends, is answered 429
 * Retry-After: 5 and journals PENDING between that re-read and the claim is still overrun: the
 * operation goes out again at once, within the same instant. The window is narrower than before
 * (the page read to the claim), not closed; the same holds for PendingResumer's one-lane re-read.
 * The claim itself must be fenced on the generation read (as InMemoryJournal.claimIf and
 * JdbcJournal's table.claim already can), or the due rule checked inside the claim.
 *
 * <p>Deterministic: pod B's delivery runs right after pod A's re-read returns.
 */
class FleetRecheckThenClaimTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time,
      (key, n, now) -> n == 1 ? Reply.status(429, Map.of("Retry-After", "5")) : Reply.status(201));

  private IdempotentExecutor.Builder executor(Journal j, String owner) {
    return IdempotentExecutor.builder().journal(j).owner(owner).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5);
  }

  @Test
  void anInstanceDoesNotSendWhatAnotherQueuedAgainBetweenItsReReadAndItsClaim() throws Exception {
    IdempotentExecutor podB = executor(journal, "pod-b").build();
    AtomicBoolean pageRead = new AtomicBoolean();
    AtomicBoolean raced = new AtomicBoolean();
    Journal podAsView = new ForwardingJournal(journal) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
          int limit) throws IdempotencyException {
        List<OperationRecord> page = super.findDue(now, owner, names, after, limit);
        if (!page.isEmpty()) {
          pageRead.set(true);
        }
        return page;
      }

      @Override
      public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
        Optional<OperationRecord> r = super.find(id);
        if (pageRead.get() && r.isPresent() && r.get().state() == OperationState.PENDING
            && raced.compareAndSet(false, true)) {
          // Pod A's delivery re-read it, unchanged and due; pod B's dispatcher delivers it now.
          podB.resumeAsync(id, host);
        }
        return r;
      }
    };
    IdempotentExecutor podA = executor(podAsView, "pod-a").build();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    podA.enqueue(op);
    Instant t0 = time.now();

    OutboxDispatcher outboxA = OutboxDispatcher.builder(podA).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build().start();
    time.advance(Duration.ZERO);

    assertTrue(raced.get(), "pod B delivered between pod A's re-read and its claim");
    assertEquals(1, host.sendTimes().size(), "the server answered 429 Retry-After: 5 at " + t0 + " and the journal"
        + " holds the operation PENDING until " + t0.plusSeconds(5) + ", yet pod A sent it again at "
        + host.sendTimes());
    outboxA.close();
  }
}
