package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A concurrent resume pass that stops with claims no lane took gives them back one by one
 * ({@code PendingResumer.Batches.giveBackUnsent}, changed by cffe7dda to "try every claim, throw the
 * first failure with the rest suppressed"). When the journal throws the <em>same</em> exception
 * instance for two give-backs, {@code failure.addSuppressed(e)} is {@code e.addSuppressed(e)}, which
 * throws {@code IllegalArgumentException("Self-suppression not permitted")} from inside the catch:
 * the loop stops there and the claims after it are neither given back nor have their single flight
 * left. Every later call of such an operation in this process waits for a flight no one leads, until
 * close(): exactly what the commit set out to prevent.
 *
 * <p>Why it is real: a failing journal often throws one instance again and again: a driver or
 * decorator that keeps the exception that broke it and rethrows it on every later call, HotSpot's
 * preallocated {@code OutOfMemoryError} once its stack-trace-carrying ones are used up, or the
 * shared {@code NullPointerException} that {@code -XX:+OmitStackTraceInFastThrow} (on by default)
 * throws at a hot site. The code already knows the pitfall elsewhere ({@code AttemptLoop.notSentThenFatal}
 * checks {@code e != fatal} before {@code addSuppressed}); {@code giveBackUnsent} does not.
 */
class RvRtoday4GiveBackSameFailureTwiceTest {

  @Test
  void aJournalThatThrowsTheSameInstanceTwiceStillHasEveryClaimTriedAndEveryFlightLeft() throws Exception {
    // One instance, thrown by every give-back once the journal went bad.
    IllegalStateException broken = new IllegalStateException("journal connection broken");
    AtomicInteger claimAlls = new AtomicInteger();
    AtomicInteger transitions = new AtomicInteger();
    CountDownLatch secondBatchClaiming = new CountDownLatch(1);
    CountDownLatch transportAsked = new CountDownLatch(1);
    AtomicReference<Thread> failingLane = new AtomicReference<>();
    ForwardingJournal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
          Duration leaseFor) throws IdempotencyException {
        List<Optional<Lease>> claimed = super.claimAll(asRead, owner, now, leaseFor);
        if (claimAlls.incrementAndGet() == 2) {
          // The second batch is claimed while the other lane fails: it is left, with the first
          // batch's untaken operation, for giveBackUnsent (three claims).
          secondBatchClaiming.countDown();
          await(transportAsked);
          join(failingLane.get());
        }
        return claimed;
      }

      @Override
      public OperationRecord transition(OperationId id, Lease lease, Transition transition)
          throws IdempotencyException {
        // The first give-back is the failing lane's own; from the second on (giveBackUnsent) the
        // journal is broken and throws the same instance each time.
        if (transitions.incrementAndGet() >= 2) {
          throw broken;
        }
        return super.transition(id, lease, transition);
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(2)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    List<Operation> ops = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      Operation op = Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build();
      h.executor.enqueue(op);
      h.time.jump(Duration.ofMillis(1));
      ops.add(op);
    }
    NoClassDefFoundError laneFailure = new NoClassDefFoundError("com/example/Credentials");
    ResumeHandler handler = new ResumeHandler() {
      @Override
      public Transport transport() {
        failingLane.set(Thread.currentThread());
        transportAsked.countDown();
        await(secondBatchClaiming);
        throw laneFailure;
      }

      @Override
      public void onSuccess(Outcome outcome) {
      }

      @Override
      public void onFailure(OperationException failure) {
      }
    };

    NoClassDefFoundError thrown = assertThrows(NoClassDefFoundError.class,
        () -> h.executor.resumePending(Map.of("create-order", handler)));
    assertSame(laneFailure, thrown, "the pass ends with the lane's failure");
    int tried = transitions.get();

    // The journal recovers. Every operation can be called again in this process.
    journalRecovered(transitions);
    for (Operation op : ops) {
      CompletableFuture<Outcome> call = h.executor.executeAsync(op, (AsyncTransport) (request, key) ->
          CompletableFuture.completedFuture(ScriptedTransport.response(201)));
      h.time.runUntilIdle();
      assertTrue(call.isDone(), "the app's call of " + op.id() + " waits for a flight the pass never left;"
          + " the journal holds " + h.state(op) + "; the pass's suppressed failures: "
          + List.of(thrown.getSuppressed()));
    }
    assertEquals(4, tried, "every one of the three untaken claims is tried (plus the lane's own give-back)");
  }

  private static void journalRecovered(AtomicInteger transitions) {
    transitions.set(Integer.MIN_VALUE);
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(30, TimeUnit.SECONDS)) {
        throw new AssertionError("the other lane never got there");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static void join(Thread thread) {
    try {
      thread.join(TimeUnit.SECONDS.toMillis(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    if (thread.isAlive()) {
      throw new AssertionError("the failing lane never ended");
    }
  }
}
