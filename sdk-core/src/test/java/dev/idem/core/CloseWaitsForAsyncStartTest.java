package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * IdempotentExecutor.close() promises to wait (up to 10 s) for journal work already running, so
 * that the app can close the journal right after. The first claim of resumeAsync/executeAsync runs
 * on the caller's thread (AsyncDriver.start) and is not counted by ExecutorLifecycle: close returns
 * at once while that claim is still in the journal, and the driver then writes the journal after
 * close returned.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class CloseWaitsForAsyncStartTest {
  private final VirtualTime time = new VirtualTime();
  private final CountDownLatch inClaim = new CountDownLatch(1);
  private final CountDownLatch claimMayReturn = new CountDownLatch(1);
  private final AtomicBoolean blockClaims = new AtomicBoolean();
  private final AtomicBoolean closeReturned = new AtomicBoolean();
  private final List<String> writesAfterClose = new CopyOnWriteArrayList<>();

  private final ForwardingJournal journal = new ForwardingJournal(new InMemoryJournal()) {
    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      if (blockClaims.get()) {
        inClaim.countDown();
        try {
          claimMayReturn.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      Optional<Lease> l = super.claim(id, owner, now, leaseFor);
      if (closeReturned.get()) {
        writesAfterClose.add("claim");
      }
      return l;
    }

    @Override
    public dev.idem.core.OperationRecord transition(OperationId id, Lease lease, Transition t)
        throws IdempotencyException {
      if (closeReturned.get()) {
        writesAfterClose.add("transition");
      }
      return super.transition(id, lease, t);
    }
  };

  @Test
  void closeWaitsForTheFirstClaimOfAnAsyncResume() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5).build();
    Operation op = Operation.builder("create-order", Requests.order("{}")).build();
    idem.enqueue(op);
    FakeHost host = new FakeHost(time, FakeHost.always(201));

    blockClaims.set(true);
    Thread caller = new Thread(() -> idem.resumeAsync(op.id(), host), "resumer");
    caller.start();
    assertTrue(inClaim.await(5, TimeUnit.SECONDS));

    Thread closer = new Thread(() -> {
      idem.close();
      closeReturned.set(true);
    }, "closer");
    closer.start();
    closer.join(1_000);
    boolean closeWaited = closer.isAlive();

    claimMayReturn.countDown();
    caller.join(5_000);
    closer.join(15_000);

    assertTrue(closeWaited, "close() returned while the journal claim of resumeAsync was still running; journal"
        + " writes made after close returned: " + writesAfterClose);
  }
}
