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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A concurrent resume pass that stops (a lane's Error, here) gives back the claims its batches made
 * and no lane took ({@code Batches.giveBackUnsent}). A journal whose give-back throws something
 * other than a JournalException for one of them (a RuntimeException of a journal's bug, an Error of
 * its driver) must not keep the others claimed IN_FLIGHT with their flights taken: every later call
 * of those in this process waited for a flight no one leads, until close(). The failing one stays
 * claimed under this owner (the next resume takes it back at once), its flight left; the pass still
 * ends with the lane's own failure, the give-back's added to it.
 */
class ResumeGiveBackFailureGivesBackTheRestTest {

  @ParameterizedTest
  @ValueSource(strings = {"RuntimeException", "Error"})
  void aGiveBackThatThrowsStillGivesBackTheOtherClaims(String kind) throws Exception {
    Throwable giveBackFailure = kind.equals("Error") ? new AssertionError("journal driver bug")
        : new IllegalStateException("journal bug");
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
          // The second batch is claimed while the other lane fails: claimed after the pass stopped,
          // it stays with the first batch's untaken operation for giveBackUnsent.
          secondBatchClaiming.countDown();
          await(transportAsked);
          join(failingLane.get());
        }
        return claimed;
      }

      @Override
      public OperationRecord transition(OperationId id, Lease lease, Transition transition)
          throws IdempotencyException {
        // The first give-back is the failing lane's own; the second is the first of giveBackUnsent.
        if (transitions.incrementAndGet() == 2) {
          throwUnchecked(giveBackFailure);
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
    AtomicInteger sends = new AtomicInteger();
    ResumeHandler handler = new ResumeHandler() {
      @Override
      public Transport transport() {
        // Held until the other lane claims the second batch, so that the pass stops with claims
        // no lane took, whatever the lanes' timing.
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
    assertTrue(List.of(thrown.getSuppressed()).contains(giveBackFailure),
        "the give-back's failure is added to it: " + List.of(thrown.getSuppressed()));
    assertEquals(4, transitions.get(), "each of the four claims was given back, or tried");

    int claimedStill = 0;
    for (Operation op : ops) {
      OperationRecord r = h.record(op);
      assertEquals(List.of(), r.attempts(), op.id() + ": nothing was sent");
      if (r.state() == OperationState.IN_FLIGHT) {
        claimedStill++;
        assertEquals(Harness.OWNER, r.owner());
        continue;  // the one whose give-back threw: the next resume takes it back at once
      }
      assertEquals(OperationState.PENDING, r.state(), op.id() + ": its claim is given back");
    }
    assertEquals(1, claimedStill, "only the claim whose give-back threw is left");

    for (Operation op : ops) {
      CompletableFuture<Outcome> call = h.executor.executeAsync(op, (AsyncTransport) (request, key) -> {
        sends.incrementAndGet();
        assertEquals(op.id().key(), key, "the operation's own key");
        return CompletableFuture.completedFuture(ScriptedTransport.response(201));
      });
      h.time.runUntilIdle();
      assertTrue(call.isDone(), "the app's call of " + op.id() + " waits for a flight the pass never left; the"
          + " journal holds " + h.state(op));
    }
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

  private static void throwUnchecked(Throwable t) {
    if (t instanceof RuntimeException re) {
      throw re;
    }
    throw (Error) t;
  }
}
