package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.Journal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: a delivery of a record that changed since it was read, and is not due, ends PENDING; resumePending sends an operation its batch did not claim only if still due; InMemoryJournal.claimAll is fenced.
 *
 * <p>A fleet of two instances on one journal, each with its dispatcher. Pod A's poll reads its due
 * page; before it claims the operation, pod B (whose poll read the same page a moment earlier)
 * claims it, sends it, gets 429 with Retry-After: 5, and journals it PENDING, due in 5 s. Pod A then
 * starts its delivery from the stale page: IdempotentExecutor.resumeAsync reads the record again
 * (PENDING, due in 5 s), and Journal.claim takes any PENDING operation whatever its due time, so pod
 * A sends it again at once, within the same instant: the server's Retry-After and the backoff pod B
 * journaled are ignored, by the fleet's own machinery. DESIGN.md: attempts "respect server hints",
 * and the dispatcher's own DueDeadlines path takes care that an operation another instance queued
 * again "is dropped, never sent ahead of its new backoff"; the journal's due page does not.
 *
 * <p>Deterministic: pod B's delivery is run at the one moment of the race, between pod A's due
 * read and pod A's claim, by a journal view that pod A's executor reads through.
 */
class FleetStaleDueReadTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time,
      (key, n, now) -> n == 1 ? Reply.status(429, Map.of("Retry-After", "5")) : Reply.status(201));

  private IdempotentExecutor.Builder executor(Journal j, String owner) {
    return IdempotentExecutor.builder().journal(j).owner(owner).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5);
  }

  @Test
  void anInstanceDoesNotSendAnOperationThatAnotherQueuedAgainAfterItsDueReadBeforeItsBackoff() throws Exception {
    IdempotentExecutor podB = executor(journal, "pod-b").build();
    AtomicBoolean raced = new AtomicBoolean();
    Journal podAsView = new ForwardingJournal(journal) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
          int limit) throws IdempotencyException {
        List<OperationRecord> page = super.findDue(now, owner, names, after, limit);
        if (!page.isEmpty() && raced.compareAndSet(false, true)) {
          // Pod B's dispatcher delivers the same due operation first (it read the page too).
          podB.resumeAsync(page.get(0).id(), host);
        }
        return page;
      }
    };
    IdempotentExecutor podA = executor(podAsView, "pod-a").build();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    podA.enqueue(op);
    Instant t0 = time.now();

    OutboxDispatcher outboxA = OutboxDispatcher.builder(podA).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build().start();
    time.advance(Duration.ZERO);

    assertTrue(raced.get(), "pod B delivered between pod A's due read and its claim");
    List<Instant> sends = host.sendTimes();
    assertEquals(t0, sends.get(0), "pod B's attempt");
    assertEquals(1, sends.size(), "the server answered 429 Retry-After: 5 and the journal holds the operation"
        + " PENDING until " + t0.plusSeconds(5) + ", yet pod A sent it again at " + sends
        + " (journal now: " + journal.find(op.id()).orElseThrow().state() + ")");

    time.advance(Duration.ofSeconds(30));
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    assertFalse(host.sendTimes().get(1).isBefore(t0.plusSeconds(5)), "the resend waited for Retry-After");
    outboxA.close();
  }

  /**
   * The same race for resumePending (its pages are the same due query): its batch claim
   * (Journal.claimAll) may refuse a row that changed since it was read, but the lane then claims it
   * alone through the attempt loop's unfenced Journal.claim, and sends it at once.
   */
  @Test
  void resumePendingDoesNotSendAnOperationThatAnotherQueuedAgainAfterItsDueReadBeforeItsBackoff() throws Exception {
    IdempotentExecutor podB = executor(journal, "pod-b").build();
    AtomicBoolean raced = new AtomicBoolean();
    Journal podAsView = new ForwardingJournal(journal) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
          throws IdempotencyException {
        List<OperationRecord> page = super.findDue(now, owner, after, limit);
        if (!page.isEmpty() && raced.compareAndSet(false, true)) {
          podB.resumeAsync(page.get(0).id(), host);
        }
        return page;
      }

      @Override
      public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
          Duration leaseFor) throws IdempotencyException {
        return delegate().claimAll(asRead, owner, now, leaseFor); // the journal's own, fenced batch claim
      }
    };
    IdempotentExecutor podA = executor(podAsView, "pod-a").build();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    podA.enqueue(op);
    Instant t0 = time.now();

    podA.resumePending(Map.of("create-order", ResumeHandler.of(host, o -> { }, e -> { })));

    assertTrue(raced.get(), "pod B delivered between pod A's due read and its claim");
    assertEquals(1, host.sendTimes().size(), "429 Retry-After: 5 at " + t0 + " and PENDING until "
        + t0.plusSeconds(5) + ", yet resumePending on pod A sent it again at " + host.sendTimes());
  }
}
