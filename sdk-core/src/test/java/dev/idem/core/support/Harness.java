package dev.idem.core.support;

import dev.idem.core.testing.VirtualTime;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Jitter;
import dev.idem.core.spi.Journal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.RetryPolicy;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

/** One executor on fake time and an in-memory journal, and the two ways to drive it. */
public final class Harness {
  public static final String OWNER = "test-owner";
  public static final RetryPolicy POLICY = RetryPolicy.builder()
      .maxAttempts(4)
      .deadline(Duration.ofSeconds(30))
      .baseDelay(Duration.ofMillis(100))
      .multiplier(2.0)
      .maxDelay(Duration.ofSeconds(5))
      .jitter(Jitter.NONE)
      .build();

  public final VirtualTime time = new VirtualTime();
  public final Journal journal;
  public final IdempotentExecutor executor;

  public Harness() {
    this(POLICY, b -> {});
  }

  public Harness(RetryPolicy policy, Consumer<IdempotentExecutor.Builder> more) {
    this(new InMemoryJournal(), policy, more);
  }

  public Harness(Journal journal, RetryPolicy policy, Consumer<IdempotentExecutor.Builder> more) {
    this.journal = journal;
    IdempotentExecutor.Builder b = IdempotentExecutor.builder()
        .journal(journal)
        .retryPolicy(policy)
        .clock(time.clock())
        .sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run)
        .random(() -> 0.5)
        .owner(OWNER);
    more.accept(b);
    executor = b.build();
  }

  /** A transport that also checks, at send time, that the journal holds the operation IN_FLIGHT under us. */
  public ScriptedTransport transport(Operation op) {
    return transport(journal, op.id(), OWNER);
  }

  public ScriptedTransport transport(Journal j, OperationId id, String owner) {
    return new ScriptedTransport(time).checkOnSend(s -> assertInFlight(j, id, owner, s));
  }

  public static void assertInFlight(Journal journal, OperationId id, String owner, ScriptedTransport.Sent sent) {
    OperationRecord r;
    try {
      r = journal.find(new OperationId(id.scope(), id.operation(), sent.key())).orElse(null);
    } catch (IdempotencyException e) {
      throw new AssertionError(e);
    }
    assertNotNull(r, "attempt " + sent.number() + " sent for an operation the journal does not hold");
    assertEquals(OperationState.IN_FLIGHT, r.state(), "attempt " + sent.number() + " sent while " + r.state());
    assertEquals(owner, r.owner(), "attempt " + sent.number() + " sent without holding the lease");
    assertTrue(r.isLeasedAt(sent.at()), "attempt " + sent.number() + " sent on an expired lease");
  }

  public OperationRecord record(Operation op) throws IdempotencyException {
    return journal.find(op.id()).orElseThrow(() -> new AssertionError("not journaled: " + op.id()));
  }

  public OperationState state(Operation op) throws IdempotencyException {
    return record(op).state();
  }

  /** The synchronous and asynchronous paths, so that one scenario runs through both. */
  public enum Driver {
    SYNC, ASYNC;

    public Outcome run(Harness h, Operation op, ScriptedTransport t) throws IdempotencyException {
      if (this == SYNC) {
        return h.executor.execute(op, t);
      }
      CompletableFuture<Outcome> f = h.executor.executeAsync(op, t);
      h.time.runUntilIdle();
      assertTrue(f.isDone(), "the async execution did not finish once the scheduler went idle");
      return join(f);
    }

    public static Outcome join(CompletableFuture<Outcome> f) throws IdempotencyException {
      try {
        return f.join();
      } catch (CompletionException e) {
        if (e.getCause() instanceof IdempotencyException ie) {
          throw ie;
        }
        throw e;
      } catch (CancellationException e) {
        throw e;
      }
    }
  }
}
