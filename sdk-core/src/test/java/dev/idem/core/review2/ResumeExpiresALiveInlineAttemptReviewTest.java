package dev.idem.core.review2;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Jitter;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Left by b28b1e8e: the inline begin checks the age limit once, before sending; a record 1 minute
 * short of it is sent, and its attempt may run past the limit (a slow answer). A resume pass in the
 * same executor meanwhile sees it expired, so it joins no single flight (PendingResumer joins one
 * only for records not expired) although resumePending promises that an operation IN_FLIGHT under
 * the executor's own owner "running in this executor now" is waited for. Its expireIfDue claims
 * the operation over the live inline execution's lease (an owner may re-claim its own), records a
 * phantom "process stopped" attempt and ends it UNCERTAIN; the inline attempt's 201 then meets a
 * stale lease. The charge succeeded and the app's execute got its 201 from the server, yet the
 * journal says UNCERTAIN and the app is told it failed.
 */
class ResumeExpiresALiveInlineAttemptReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .retryPolicy(RetryPolicy.builder().jitter(Jitter.NONE).build())
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();
  }

  @Test
  void aResumePassDoesNotEndAnOperationThatAnInlineCallIsSendingInThisExecutor() throws Exception {
    IdempotentExecutor idem = executor();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    idem.enqueue(op);
    time.advance(Duration.ofHours(18).minusMinutes(1));  // one minute short of the 18 h age limit

    List<Throwable> passSaw = new ArrayList<>();
    CountDownLatch passDone = new CountDownLatch(1);
    Transport slow = (request, key) -> {
      time.advance(Duration.ofMinutes(2));  // a slow answer: the limit passes while the attempt is out
      Thread pass = new Thread(() -> {
        try {
          idem.resumePending(Map.of("create-order",
              ResumeHandler.of(new ScriptedTransport(time).otherwise(ScriptedTransport.status(201)), o -> {}, f -> {})));
        } catch (Exception e) {
          passSaw.add(e);
        } finally {
          passDone.countDown();
        }
      });
      pass.start();
      // A correct pass waits for this execution (single flight); give up waiting for it after a while.
      try {
        passDone.await(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return ScriptedTransport.response(201);  // the server charged
    };
    Throwable appSaw = null;
    try {
      idem.execute(op, slow);
    } catch (Exception e) {
      appSaw = e;
    }
    passDone.await(5, TimeUnit.SECONDS);

    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertEquals(OperationState.SUCCEEDED, r.state(), "the server answered 201 to the inline attempt, but the journal"
        + " says " + r.state() + " (" + r.reason() + "), attempts " + r.attempts() + "; the app was told " + appSaw);
  }
}
