package dev.idem.core.review2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Jitter;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Round 2 of "executing again an operation past its age limit ends it as resume would" (b28b1e8e).
 * The inline begin now runs KeyRetention.expireIfDue, whose claim is made under the executor's own
 * owner. A resumePending pass in the same executor does the same for an expired operation, outside
 * the single flight (PendingResumer joins no flight for an expired record). When the app executes
 * the operation while the pass is ending it (between the pass's claim and its transition), the
 * inline expiry's claim takes over the pass's live lease (the journal lets an owner re-claim its
 * own), and Claims records the attempt the "holder" may have sent: a phantom ambiguous attempt.
 * An order that was never sent (no attempt at all, its dispatcher was down past its age limit)
 * ends UNCERTAIN, "an attempt may have reached the server", instead of FAILED, and the operator is
 * sent to reconcile a charge that certainly never happened.
 */
class InlineExpiryRacesResumeExpiryReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final List<Runnable> beforeFirstFinish = new ArrayList<>();
  private final InMemoryJournal memory = new InMemoryJournal();
  private final ForwardingJournal journal = new ForwardingJournal(memory) {
    @Override
    public OperationRecord transition(OperationId id, Lease lease, Transition t) throws IdempotencyException {
      if (t.target().isTerminal() && !beforeFirstFinish.isEmpty()) {
        beforeFirstFinish.remove(0).run();  // the app's call lands between the pass's claim and transition
      }
      return super.transition(id, lease, t);
    }
  };

  private IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .retryPolicy(RetryPolicy.builder().jitter(Jitter.NONE).build())
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();
  }

  @Test
  void aNeverSentOperationEndsFailedWhenExecutedWhileAResumeEndsItAtItsAgeLimit() throws Exception {
    IdempotentExecutor idem = executor();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    idem.enqueue(op);
    time.advance(Duration.ofHours(19));  // the dispatcher was down: never sent, past the 18 h age limit

    ScriptedTransport transport = new ScriptedTransport(time).otherwise(ScriptedTransport.status(201));
    List<Throwable> appSaw = new CopyOnWriteArrayList<>();
    Thread[] app = new Thread[1];
    beforeFirstFinish.add(() -> {
      // The app's call, on its own thread, lands between the pass's claim and transition. (Run on
      // the pass's thread, as first written, it would wait for the pass's own flight: a deadlock
      // no real app can produce.) The pass goes on once the call waits (the operation's flight)
      // or has ended.
      app[0] = new Thread(() -> {
        try {
          idem.execute(op, transport);
        } catch (Exception e) {
          appSaw.add(e);
        }
      });
      app[0].start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (app[0].getState() != Thread.State.WAITING && app[0].getState() != Thread.State.TERMINATED
          && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
    });
    try {
      idem.resumePending(Map.of("create-order", ResumeHandler.of(transport, o -> {}, f -> {})));
    } catch (Exception passFailed) {
      appSaw.add(passFailed);  // the pass's own transition meets a stale lease
    }
    app[0].join(TimeUnit.SECONDS.toMillis(10));

    OperationRecord r = memory.find(op.id()).orElseThrow();
    assertEquals(0, transport.count(), "nothing may be sent past the age limit");
    assertEquals(OperationState.FAILED, r.state(), "a never-sent operation ended " + r.state() + " (" + r.reason()
        + "); the app was told " + appSaw);
    assertTrue(r.attempts().isEmpty(), "nothing was ever sent, yet the journal records attempts " + r.attempts());
  }
}
