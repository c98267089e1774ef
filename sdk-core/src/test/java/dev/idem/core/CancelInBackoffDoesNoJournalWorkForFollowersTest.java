package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test (a review of 22b87c72, whose first design this test refuted; the fix tells
 * waiting app calls PENDING again and lets only resume passes and deliveries start over).
 *
 * <p>Review of 22b87c72 ("calls waiting on an async execution cancelled in its backoff start over
 * from the journal ... on the pool, never on the cancelling thread"): when the executor's pool is
 * full, the cancel runs the waiting calls' new start (journal begin, claim, and the send of the
 * next attempt) on the thread that cancelled.
 *
 * <p>An {@code executeAsync} got a 503 and waits out its backoff; a second call of the same
 * operation waits on it (single flight). The pool is saturated (the owned pool refuses beyond its
 * queue of 1024; an app's bounded pool likewise), and the app cancels the first future (a Reactor
 * {@code timeout()}, a client disconnect on a Netty event loop). The execution is quiet, so
 * {@code holdFlightUntilQuiet} hands the flight's release to the pool; refused, it runs it "on
 * this thread after all": the flight ends not begun and the waiting call's {@code startAsync}
 * runs inside {@code cancel()}, which journals and sends. Before 22b87c72 the waiting calls were
 * told PENDING, which writes nothing. The class comment says "Cancelling a future returns at once
 * and never waits for the journal", executeAsync's that the cancel "returns at once, never waiting
 * for the journal", and holdFlightUntilQuiet's own that the new start runs "never on the thread
 * that cancelled, which must return at once"; a timer in the same situation waits and hands over
 * again rather than run journal work on the scheduler's thread.
 *
 * <p>User-visible consequence: under load (exactly when the pool is full), a cancel or timeout
 * blocks its thread on the journal's writes (an fsync, a PostgreSQL lock) and on the transport's
 * send of another caller's attempt; on a Reactor or Netty thread that stalls every connection of
 * that loop.
 */
class CancelInBackoffDoesNoJournalWorkForFollowersTest {
  private final VirtualTime time = new VirtualTime();
  private final Queue<Runnable> poolQueue = new ArrayDeque<>();
  private volatile boolean poolFull;
  private final Executor pool = r -> {
    if (poolFull) {
      throw new RejectedExecutionException("pool and queue full");
    }
    poolQueue.add(r);
  };
  private final List<String> journalWritesOnCancellingThread = new CopyOnWriteArrayList<>();
  private volatile Thread cancelling;
  private final ForwardingJournal journal = new ForwardingJournal(new InMemoryJournal()) {
    private void note(String what) {
      if (Thread.currentThread() == cancelling) {
        journalWritesOnCancellingThread.add(what);
      }
    }

    @Override
    public BeginResult begin(NewOperation op) throws IdempotencyException {
      note("begin");
      return super.begin(op);
    }

    @Override
    public BeginResult beginAndClaim(NewOperation op, String owner, Duration leaseFor) throws IdempotencyException {
      note("beginAndClaim");
      return super.beginAndClaim(op, owner, leaseFor);
    }

    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      note("claim");
      return super.claim(id, owner, now, leaseFor);
    }
  };
  private final ScriptedTransport transport = new ScriptedTransport(time).then(status(503)).otherwise(status(201));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(pool).random(() -> 0.5)
      .retryPolicy(RetryPolicy.builder().maxAttempts(4).baseDelay(Duration.ofSeconds(1))
          .maxDelay(Duration.ofSeconds(1)).jitter(Jitter.NONE).build())
      .build();

  @AfterEach
  void stop() {
    poolFull = false;
    idem.close();
  }

  @Test
  void cancellingInTheBackoffWithAFullPoolDoesNoJournalWorkOrSendOnTheCancellingThread() throws Exception {
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    assertEquals(1, transport.count());
    assertFalse(first.isDone(), "in its backoff after the 503");
    CompletableFuture<Outcome> second = idem.executeAsync(op, transport); // waits on the first
    assertFalse(second.isDone());

    poolFull = true;
    cancelling = Thread.currentThread();
    assertTrue(first.cancel(true));
    cancelling = null;

    String me = Thread.currentThread().getName();
    List<String> sentHere = transport.sent().stream().filter(s -> s.thread().equals(me) && s.number() > 1)
        .map(s -> "attempt " + s.number()).toList();
    assertEquals(List.of(), journalWritesOnCancellingThread, "cancel() wrote the journal for another caller's"
        + " new start on the cancelling thread (pool full); it also sent " + sentHere);
    assertEquals(1, transport.count(), "cancel() sent another caller's attempt on the cancelling thread");
  }
}
