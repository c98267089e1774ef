package dev.idem.core.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.RetryPolicy;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class MicrometerMetricsTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final MicrometerMetrics metrics = MicrometerMetrics.bind(registry, journal, time.clock());

  private IdempotentExecutor.Builder executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5).listener(metrics);
  }

  private static Operation op(String name, int n) {
    return Operation.builder(name, Requests.order("{\"n\":" + n + "}")).build();
  }

  private double counter(String name, String... tags) {
    return registry.get(name).tags(tags).counter().count();
  }

  @Test
  void theQueueGaugesReadTheJournal() throws Exception {
    IdempotentExecutor idem = executor().build();
    assertEquals(0.0, registry.get("idem.operations.pending").gauge().value());
    assertEquals(0.0, registry.get("idem.operations.pending.oldest.age").gauge().value());

    idem.enqueue(op("create-order", 1));
    time.advance(Duration.ofSeconds(30));
    idem.enqueue(op("create-order", 2));
    time.advance(Duration.ofSeconds(15));

    assertEquals(2.0, registry.get("idem.operations.pending").gauge().value());
    assertEquals(45.0, registry.get("idem.operations.pending.oldest.age").gauge().value());
  }

  @Test
  void outcomesAttemptsAndRetriesAreCountedPerOperationName() throws Exception {
    IdempotentExecutor idem = executor().build();
    FakeHost flaky = new FakeHost(time, (k, n, now) -> n == 1 ? Reply.status(503) : Reply.status(201));
    FakeHost bad = new FakeHost(time, FakeHost.always(400));
    FakeHost silent = new FakeHost(time, (k, n, now) -> Reply.fail(new SocketTimeoutException("read timed out")));

    time.advance(Duration.ofSeconds(2));
    Operation ok = op("create-order", 1);
    idem.enqueue(ok);
    time.advance(Duration.ofSeconds(3));
    idem.execute(ok, flaky);
    assertThrows(OperationFailedException.class, () -> idem.execute(op("refund", 2), bad));
    assertThrows(OperationUncertainException.class, () -> idem.execute(op("refund", 3), silent));

    var duration = registry.get("idem.operation.duration").tags("operation", "create-order", "outcome", "succeeded")
        .timer();
    assertEquals(1, duration.count());
    assertTrue(duration.totalTime(TimeUnit.SECONDS) >= 3.0, "measured from journaling, not from the first attempt");
    var attempts = registry.get("idem.operation.attempts").tags("operation", "create-order", "outcome", "succeeded")
        .summary();
    assertEquals(2.0, attempts.totalAmount());
    assertEquals(1.0, counter("idem.retries", "operation", "create-order"));
    assertEquals(1.0, counter("idem.operations.failed", "operation", "refund"));
    assertEquals(1.0, counter("idem.operations.uncertain", "operation", "refund"));
    assertEquals(5.0, registry.get("idem.operation.attempts").tags("operation", "refund", "outcome", "uncertain")
        .summary().totalAmount());
    assertEquals(4.0, counter("idem.retries", "operation", "refund"));
  }

  @Test
  void replaysMismatchesDenialsRejectionsAndBreakerTransitions() throws Exception {
    FakeHost replaying = new FakeHost(time, FakeHost.always(201));
    IdempotentExecutor idem = executor().build();
    Operation once = op("create-order", 1);
    replaying.sendAsync(once.request(), once.key());  // an earlier attempt took effect
    idem.execute(once, replaying);
    assertEquals(1.0, counter("idem.replays", "operation", "create-order"));

    Operation clash = Operation.builder("create-order", Requests.order("{\"n\":2}")).key(once.key()).build();
    assertThrows(IdempotencyKeyReusedException.class, () -> idem.execute(clash, replaying));
    assertEquals(1.0, counter("idem.key.mismatches", "operation", "create-order", "detected.by", "client"));
    assertThrows(IdempotencyKeyReusedException.class,
        () -> idem.execute(op("create-order", 3), new FakeHost(time, FakeHost.always(422))));
    assertEquals(1.0, counter("idem.key.mismatches", "operation", "create-order", "detected.by", "server"));

    IdempotentExecutor stingy = executor().circuitBreaker(CircuitBreakerSettings.disabled())
        .retryBudget(RetryBudget.tokenBucket(5, 5, 1, 0, time.clock())).build();  // one retry, then none
    assertThrows(OperationPendingException.class,
        () -> stingy.execute(op("charge", 4), new FakeHost(time, FakeHost.always(503))));
    assertEquals(1.0, counter("idem.budget.denials", "operation", "charge"));

    IdempotentExecutor guarded = executor().retryBudget(RetryBudget.unlimited())
        // A deadline shorter than the open period: the inline call cannot wait for the probe.
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).deadline(Duration.ofSeconds(5)).build())
        .circuitBreaker(CircuitBreakerSettings.builder().minimumCalls(2).slidingWindowSize(2).build()).build();
    FakeHost down = new FakeHost(time, FakeHost.always(503));
    for (int i = 0; i < 2; i++) {
      Operation o = op("charge", 10 + i);
      assertThrows(OperationFailedException.class, () -> guarded.execute(o, down));
    }
    assertThrows(OperationPendingException.class, () -> guarded.execute(op("charge", 12), down));
    assertEquals(1.0, counter("idem.breaker.rejections", "operation", "charge"));
    assertEquals(1.0, counter("idem.breaker.transitions", "to", "OPEN"));
  }

  @Test
  void noMeterIsEverTaggedWithAKeyOrScope() throws Exception {
    IdempotentExecutor idem = executor().build();
    Operation o = Operation.builder("create-order", Requests.order("{}")).scope("tenant-42").build();
    idem.execute(o, new FakeHost(time, (k, n, now) -> n == 1 ? Reply.status(503) : Reply.status(201)));

    for (Meter m : registry.getMeters()) {
      for (var tag : m.getId().getTags()) {
        assertTrue(!tag.getValue().contains(o.key().value()) && !tag.getValue().contains("tenant-42"),
            m.getId().toString());
      }
    }
    assertNull(registry.find("idem.retries").tag("key", o.key().value()).counter());
  }

  @Test
  void aFailingJournalReadsAsNaN() throws Exception {
    journal.close();
    assertTrue(Double.isNaN(registry.get("idem.operations.pending").gauge().value()));
    assertTrue(Double.isNaN(registry.get("idem.operations.pending.oldest.age").gauge().value()));
  }
}
