package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.Reconciliation;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.OwnThreads;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link IdempotentExecutor#close()} promises that the app may close its journal right after it
 * returns: it waits for the journal work in progress. It waited for {@code execute} and
 * {@code resume} (counted by {@code ExecutorLifecycle.enterSync}), but not for the other calls
 * that write the journal on the caller's thread: {@code enqueue} (an outbox {@code submit}),
 * {@code redrive}, {@code reconcileUncertain}, the begin of {@code executeAsync}, and the expiry
 * that {@code resumeAsync} writes for an operation past its age limit. Close
 * returned while one of them was still in the journal, and the app then closed the journal under
 * it: the write landed on a closed journal (on a real one, "journal is closed" thrown at a caller
 * whose operation may be half recorded).
 *
 * <p>Each case blocks one write of the call inside the journal, closes the executor on another
 * thread, and checks that close is still waiting when the write is let go, and that no write hits
 * the journal after the app closed it. Found by a review on 2026-12-04; failed before the fix.
 */
class CloseWaitsForCallerThreadWritesTest {
  private static final long LONG_SECONDS = 10;

  /** A call of the executor that writes the journal on the caller's thread, and the write that blocks. */
  enum Call {
    ENQUEUE(Write.BEGIN),
    EXECUTE_ASYNC(Write.BEGIN),
    REDRIVE(Write.REDRIVE),
    RECONCILE_UNCERTAIN(Write.SETTLE),
    /** An operation past its age limit, which resumeAsync ends on the caller's thread (a claim, then FAILED). */
    RESUME_ASYNC_EXPIRED(Write.CLAIM);

    final Write blocked;

    Call(Write blocked) {
      this.blocked = blocked;
    }
  }

  enum Write { BEGIN, REDRIVE, SETTLE, CLAIM }

  private final VirtualTime time = new VirtualTime();
  private final AtomicReference<Write> blockIn = new AtomicReference<>();
  private final CountDownLatch inWrite = new CountDownLatch(1);
  private final CountDownLatch writeMayEnd = new CountDownLatch(1);
  /** Set by the test when the app closes its journal, as it does right after the executor's close. */
  private final AtomicBoolean journalClosed = new AtomicBoolean();
  private final List<String> writesOnAClosedJournal = new CopyOnWriteArrayList<>();

  private final ForwardingJournal journal = new ForwardingJournal(new InMemoryJournal()) {
    @Override
    public BeginResult begin(NewOperation operation) throws IdempotencyException {
      block(Write.BEGIN);
      return written("begin", super.begin(operation));
    }

    @Override
    public OperationRecord redrive(OperationId id, Instant now) throws IdempotencyException {
      block(Write.REDRIVE);
      return written("redrive", super.redrive(id, now));
    }

    @Override
    public Optional<OperationRecord> redriveIfUnchanged(OperationRecord asRead, Instant now)
        throws IdempotencyException {
      block(Write.REDRIVE);
      return written("redriveIfUnchanged", super.redriveIfUnchanged(asRead, now));
    }

    @Override
    public Optional<OperationRecord> settleIfUnchanged(OperationRecord asRead, String owner, Duration leaseFor,
        Transition settlement) throws IdempotencyException {
      block(Write.SETTLE);
      return written("settleIfUnchanged", super.settleIfUnchanged(asRead, owner, leaseFor, settlement));
    }

    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      block(Write.CLAIM);
      return written("claim", super.claim(id, owner, now, leaseFor));
    }

    @Override
    public OperationRecord transition(OperationId id, Lease lease, Transition t) throws IdempotencyException {
      return written("transition", super.transition(id, lease, t));
    }
  };

  private void block(Write write) {
    if (blockIn.compareAndSet(write, null)) {
      inWrite.countDown();
      try {
        writeMayEnd.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** A write that ends after the app closed the journal: a real journal would have thrown. */
  private <T> T written(String what, T result) {
    if (journalClosed.get()) {
      writesOnAClosedJournal.add(what);
    }
    return result;
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  @ParameterizedTest
  @EnumSource(Call.class)
  void closeWaitsForTheCallsJournalWriteBeforeItReturns(Call call) throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .owner("test-owner").maxPendingAge(Duration.ofHours(1)).build();
    FakeHost host = new FakeHost(time, FakeHost.always(201));
    Operation uncertain = order(1);
    if (call == Call.REDRIVE || call == Call.RECONCILE_UNCERTAIN) {
      idem.enqueue(uncertain);
      Lease lease = journal.claim(uncertain.id(), "test-owner", time.clock().instant(), Duration.ofMinutes(1))
          .orElseThrow();
      journal.transition(uncertain.id(), lease, Transition.finish(OperationState.UNCERTAIN, time.clock().instant(),
          null, "set up: the server may have taken it"));
    }
    if (call == Call.RESUME_ASYNC_EXPIRED) {
      idem.enqueue(uncertain);
      time.advance(Duration.ofHours(2));
    }
    Operation fresh = order(2);
    blockIn.set(call.blocked);

    CompletableFuture<Object> caller = OwnThreads.supply(() -> {
      try {
        return switch (call) {
          case ENQUEUE -> idem.enqueue(fresh);
          case EXECUTE_ASYNC -> idem.executeAsync(fresh, host);
          case REDRIVE -> idem.redrive(uncertain.id());
          case RECONCILE_UNCERTAIN -> idem.reconcileUncertain(
              r -> Reconciliation.succeeded(ScriptedTransport.response(201), "found at the server"));
          case RESUME_ASYNC_EXPIRED -> idem.resumeAsync(uncertain.id(), host);
        };
      } catch (IdempotencyException e) {
        throw new java.util.concurrent.CompletionException(e);
      }
    });
    assertTrue(inWrite.await(LONG_SECONDS, TimeUnit.SECONDS), "the call reached its journal write");

    CompletableFuture<Void> closed = OwnThreads.closeUntilItWaits(idem);
    boolean returnedDuringTheWrite = closed.isDone();
    if (returnedDuringTheWrite) {
      journalClosed.set(true);  // the app closes its journal as soon as close returns
    }

    writeMayEnd.countDown();
    closed.get(LONG_SECONDS, TimeUnit.SECONDS);
    journalClosed.set(true);
    caller.get(LONG_SECONDS, TimeUnit.SECONDS);

    assertFalse(returnedDuringTheWrite, call + ": close() returned while the call was still writing the journal");
    assertEquals(List.of(), writesOnAClosedJournal, call + ": journal writes after the app closed the journal");
  }
}
