package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** A user's own Classifier and DelayFunction, end to end through both drivers. */
class CustomPolicyTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  /** This API answers 404 while a replica catches up: worth retrying; everything else as usual. */
  private static final Classifier REPLICA_LAG = new Classifier() {
    @Override
    public Optional<Verdict> classify(ResponseSnapshot response) {
      return response.status() == 404 ? Optional.of(Verdict.transientFailure("404: replica lag"))
          : Optional.empty();
    }

    @Override
    public Optional<Verdict> classify(IOException failure) {
      return Optional.empty();
    }
  };

  /** Linear backoff, 250 ms per retry, no jitter. */
  private static final DelayFunction LINEAR = (retry, previous, random) -> Duration.ofMillis(250L * retry);

  private IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).classifier(REPLICA_LAG.orElse(Classifier.defaults()))
        .retryPolicy(RetryPolicy.builder().delayFunction(LINEAR).build()).build();
  }

  private final FakeHost host = new FakeHost(time, (k, n, now) -> n <= 2 ? Reply.status(404) : Reply.status(201));

  @Test
  void synchronous() throws Exception {
    Operation op = Operation.builder("get-or-create", Requests.order("{}")).build();

    Outcome outcome = executor().execute(op, host);

    assertEquals(List.of(Duration.ofMillis(250), Duration.ofMillis(500)), time.sleeperWaits());
    check(outcome);
  }

  @Test
  void asynchronous() throws Exception {
    Operation op = Operation.builder("get-or-create", Requests.order("{}")).build();

    CompletableFuture<Outcome> f = executor().executeAsync(op, host);
    time.advance(Duration.ofSeconds(1));

    assertEquals(List.of(Duration.ofMillis(250), Duration.ofMillis(500)), time.scheduledDelays());
    check(f.getNow(null));
  }

  @Test
  void theDefaultsStillApplyToWhatTheCustomClassifierLeavesAlone() {
    FakeHost badRequest = new FakeHost(time, FakeHost.always(400));
    Operation op = Operation.builder("get-or-create", Requests.order("{}")).build();

    assertThrows(OperationFailedException.class, () -> executor().execute(op, badRequest));
    assertEquals(1, badRequest.attempts(op.key()));
  }

  private void check(Outcome outcome) {
    assertEquals(3, outcome.attempts().size());
    AttemptRecord first = outcome.attempts().get(0);
    assertEquals(Classification.TRANSIENT, first.classification());
    assertEquals("404: replica lag", first.reason());
    assertTrue(first.decision().contains("custom delay function"), first.decision());
    assertEquals(Duration.ofMillis(250), first.delay());
    assertEquals(3, host.attempts(outcome.key()));
  }
}
