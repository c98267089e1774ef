package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.RetryBudget;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** "This key is still in flight" is a wait, not a failure: defaults, budget, floor and a policy that reads the response. */
class InFlightWaitTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  /** Defaults, but for virtual time and fixed jitter. */
  private IdempotentExecutor.Builder defaults() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5);
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  /** A server still running the first request with each key until {@code busyUntil}; 409 without Retry-After. */
  private static FakeHost.Behaviour stillWorkingUntil(Instant busyUntil) {
    return (key, n, now) -> now.isBefore(busyUntil) ? Reply.status(409) : Reply.status(201);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aConflictWithoutRetryAfterWhileTheServerStillWorksDoesNotEndUncertain(Driver d) throws Exception {
    IdempotentExecutor idem = defaults().build();
    Instant start = time.now();
    FakeHost host = new FakeHost(time, stillWorkingUntil(start.plusSeconds(6)));
    Operation op = order(1);

    Outcome out;
    if (d == Driver.SYNC) {
      out = idem.execute(op, host);
    } else {
      CompletableFuture<Outcome> f = idem.executeAsync(op, host);
      time.runUntilIdle();
      out = Driver.join(f);
    }

    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    assertEquals(op.key(), out.key());
    assertEquals(1, host.effects());
    List<Instant> sends = host.sendTimes();
    assertEquals(List.of(start, start.plusSeconds(1), start.plusSeconds(3), start.plusSeconds(7)), sends,
        "waits of 1 s, 2 s and 4 s: at least the in-flight minimum, growing with the multiplier");
    assertTrue(Duration.between(start, time.now()).compareTo(Duration.ofSeconds(2)) > 0);
  }

  @Test
  void resumedOperationsAnsweredInFlightAfterACrashAllSucceed() throws Exception {
    IdempotentExecutor idem = defaults().build();
    List<Operation> ops = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      ops.add(order(i));
      idem.enqueue(ops.get(i));
    }
    // The dead process's requests are still running on the server for the next 5 s.
    FakeHost host = new FakeHost(time, stillWorkingUntil(time.now().plusSeconds(5)));
    List<OperationException> failures = new ArrayList<>();

    ResumeSummary summary = idem.resumePending(Map.of("create-order",
        ResumeHandler.of(host, o -> { }, failures::add)));

    assertEquals(20, summary.succeeded(), summary + " " + failures);
    assertEquals(0, summary.uncertain());
    for (Operation op : ops) {
      assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    }
    assertEquals(20, host.effects());
  }

  @Test
  void theInFlightMinimumIsConfigurableAndRetryAfterStillSetsAFloor() throws Exception {
    IdempotentExecutor idem = defaults().retryPolicy(RetryPolicy.builder().inFlightMinDelay(Duration.ofMillis(250))
        .build()).build();
    Operation op = order(1);
    FakeHost host = new FakeHost(time, (key, n, now) -> switch (n) {
      case 1, 2 -> Reply.status(409);
      case 3 -> Reply.status(409, Map.of("Retry-After", "3"));
      default -> Reply.status(201);
    });

    idem.execute(op, host);

    assertEquals(List.of(Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(3)), time.sleeperWaits());
  }

  @Test
  void aDelayFunctionCanReadTheResponse() throws Exception {
    DelayFunction fromHeader = (DelayFunction.WithResponse) (retry, previous, random, response) -> response
        .flatMap(r -> r.header("X-Wait-Ms")).map(ms -> Duration.ofMillis(Long.parseLong(ms)))
        .orElse(Duration.ofMillis(100));
    IdempotentExecutor idem = defaults().retryPolicy(RetryPolicy.builder().delayFunction(fromHeader).build()).build();
    Operation op = order(1);
    FakeHost host = new FakeHost(time, (key, n, now) -> n == 1 ? Reply.status(503, Map.of("X-Wait-Ms", "1234"))
        : n == 2 ? Reply.fail(new java.net.ConnectException("refused")) : Reply.status(201));

    idem.execute(op, host);

    assertEquals(List.of(Duration.ofMillis(1234), Duration.ofMillis(100)), time.sleeperWaits(),
        "the header's wait after the 503; the fallback after a failure with no response");
    Optional<ResponseSnapshot> none = Optional.empty();
    assertEquals(Duration.ofMillis(100), fromHeader.delay(1, Duration.ZERO, 0.5),
        "the three-argument form asks with no response");
    assertEquals(Duration.ofMillis(100), fromHeader.delay(1, Duration.ZERO, 0.5, none));
  }

  @Test
  void inFlightAnswersDoNotSpendTheRetryBudget() throws Exception {
    // Room for one retry only: five in-flight answers must not use it up.
    IdempotentExecutor idem = defaults().retryBudget(RetryBudget.tokenBucket(5, 5, 1, 0, time.clock()))
        .retryPolicy(RetryPolicy.builder().inFlightMinDelay(Duration.ofMillis(100)).build()).build();
    Operation op = order(1);
    FakeHost host = new FakeHost(time, (key, n, now) -> n <= 5 ? Reply.status(409)
        : n == 6 ? Reply.status(503) : Reply.status(201));

    idem.execute(op, host);

    assertEquals(7, host.attempts(op.key()), "five in-flight polls, the 503, and one budgeted retry");
  }
}
