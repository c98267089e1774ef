package dev.idem.core.resilience4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.RetryPolicy;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.core.functions.Either;
import io.github.resilience4j.retry.RetryConfig;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class Resilience4jRetryAdapterTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final Operation op = Operation.builder("create-order", Requests.order("{}")).build();

  private IdempotentExecutor executor(Resilience4jRetryAdapter r4j) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).retryPolicy(r4j.retryPolicy()).classifier(r4j.classifier())
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();
  }

  @Test
  void maxAttemptsAndTheIntervalFunctionBecomeThePolicy() {
    RetryConfig config = RetryConfig.custom().maxAttempts(3)
        .intervalFunction(IntervalFunction.ofExponentialBackoff(100, 2)).build();
    Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(config);
    FakeHost host = new FakeHost(time, FakeHost.always(503));

    assertThrows(OperationFailedException.class, () -> executor(r4j).execute(op, host));

    assertEquals(3, r4j.retryPolicy().maxAttempts());
    assertEquals(3, host.attempts(op.key()));
    assertEquals(List.of(Duration.ofMillis(100), Duration.ofMillis(200)), time.sleeperWaits());
  }

  @Test
  void resilience4jDefaultsMapToThreeAttemptsHalfASecondApart() throws Exception {
    Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(RetryConfig.ofDefaults());
    FakeHost host = new FakeHost(time, (k, n, now) -> n < 3 ? Reply.status(503) : Reply.status(201));

    executor(r4j).execute(op, host);

    assertEquals(List.of(Duration.ofMillis(500), Duration.ofMillis(500)), time.sleeperWaits());
  }

  @Test
  void delaysAreClampedToTheBasePolicysMaxDelay() {
    RetryConfig config = RetryConfig.custom().maxAttempts(2).waitDuration(Duration.ofMinutes(5)).build();
    Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(config,
        RetryPolicy.builder().maxDelay(Duration.ofSeconds(3)).build());

    assertThrows(OperationFailedException.class,
        () -> executor(r4j).execute(op, new FakeHost(time, FakeHost.always(503))));

    assertEquals(List.of(Duration.ofSeconds(3)), time.sleeperWaits());
  }

  @Test
  void aMatchingResultIsRetriedAndOthersGoToIdemsTable() throws Exception {
    RetryConfig config = RetryConfig.<ResponseSnapshot>custom().maxAttempts(4).waitDuration(Duration.ofMillis(10))
        .retryOnResult(r -> r.status() == 404).build();
    Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(config);
    FakeHost host = new FakeHost(time, (k, n, now) -> switch (n) {
      case 1 -> Reply.status(404);
      case 2 -> Reply.status(503);  // not matched: Idem's table still retries it
      default -> Reply.status(201);
    });

    Outcome outcome = executor(r4j).execute(op, host);

    assertEquals(3, outcome.attempts().size());
    assertEquals(Classification.TRANSIENT, outcome.attempts().get(0).classification());
    assertTrue(outcome.attempts().get(0).reason().contains("retryOnResult"), outcome.attempts().get(0).reason());
    assertEquals("HTTP 503", outcome.attempts().get(1).reason());
  }

  @Test
  void aMatched2xxIsAmbiguousSoGivingUpEndsUncertain() {
    RetryConfig config = RetryConfig.<ResponseSnapshot>custom().maxAttempts(2).waitDuration(Duration.ofMillis(10))
        .retryOnResult(r -> r.status() == 202).build();
    FakeHost host = new FakeHost(time, FakeHost.always(202));

    assertThrows(OperationUncertainException.class,
        () -> executor(Resilience4jRetryAdapter.from(config)).execute(op, host));
    assertEquals(2, host.attempts(op.key()));
  }

  @Test
  void anIgnoredExceptionStopsButNeverAsFailedWhenTheRequestMayHaveGoneOut() {
    RetryConfig config = RetryConfig.custom().ignoreExceptions(SocketTimeoutException.class, ConnectException.class)
        .build();
    Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(config);
    FakeHost timeout = new FakeHost(time, (k, n, now) -> Reply.fail(new SocketTimeoutException("read timed out")));
    FakeHost refused = new FakeHost(time, (k, n, now) -> Reply.fail(new ConnectException("refused")));
    Operation other = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();

    assertThrows(OperationUncertainException.class, () -> executor(r4j).execute(op, timeout));
    assertThrows(OperationFailedException.class, () -> executor(r4j).execute(other, refused));

    assertEquals(1, timeout.attempts(op.key()));
    assertEquals(1, refused.attempts(other.key()));
  }

  @Test
  void retryExceptionsRetriesOnlyTheListedOnes() throws Exception {
    RetryConfig config = RetryConfig.custom().maxAttempts(3).waitDuration(Duration.ofMillis(10))
        .retryExceptions(SocketTimeoutException.class).build();
    Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(config);
    FakeHost host = new FakeHost(time, (k, n, now) -> n == 1 ? Reply.fail(new SocketTimeoutException("slow"))
        : n == 2 ? Reply.fail(new ConnectException("refused")) : Reply.status(201));

    OperationUncertainException e = assertThrows(OperationUncertainException.class,
        () -> executor(r4j).execute(op, host));

    assertEquals(2, host.attempts(op.key()), "the ConnectException is not listed, so it was final");
    assertEquals(Classification.AMBIGUOUS, e.attempts().get(0).classification());
  }

  @Test
  void anIntervalBiFunctionSeesTheFailedAttemptsResponseOrException() throws Exception {
    RetryConfig config = RetryConfig.<ResponseSnapshot>custom().maxAttempts(3)
        .intervalBiFunction((Integer n, Either<Throwable, ResponseSnapshot> last) -> last.isRight()
            ? last.get().header("X-Wait-Ms").map(Long::parseLong).orElse(50L)
            : 10L)
        .build();
    FakeHost host = new FakeHost(time, (k, n, now) -> switch (n) {
      case 1 -> Reply.status(503, Map.of("X-Wait-Ms", "300"));
      case 2 -> Reply.fail(new SocketTimeoutException("slow"));
      default -> Reply.status(201);
    });

    executor(Resilience4jRetryAdapter.from(config)).execute(op, host);

    assertEquals(List.of(Duration.ofMillis(300), Duration.ofMillis(10)), time.sleeperWaits());
  }

  @Test
  void aPredicateWrittenForAnotherResultTypeHasNoSay() throws Exception {
    RetryConfig config = RetryConfig.<String>custom().waitDuration(Duration.ofMillis(10))
        .retryOnResult(s -> s.isEmpty()).build();
    FakeHost host = new FakeHost(time, (k, n, now) -> n == 1 ? Reply.status(503) : Reply.status(201));

    Outcome outcome = executor(Resilience4jRetryAdapter.from(config)).execute(op, host);

    assertEquals(2, outcome.attempts().size());
  }
}
