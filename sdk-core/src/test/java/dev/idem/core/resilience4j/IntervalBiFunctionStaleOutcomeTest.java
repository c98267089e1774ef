package dev.idem.core.resilience4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import io.github.resilience4j.core.functions.Either;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The adapter hands the classified outcome to the interval function through a ThreadLocal. An
 * outcome that is classified but never followed by a delay decision (a success, a permanent
 * failure) stays behind on the thread, and the next operation's in-flight decision (which skips the
 * classifier) reads another operation's response.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class IntervalBiFunctionStaleOutcomeTest {
  private final VirtualTime time = new VirtualTime();
  private final List<Integer> seenStatuses = new ArrayList<>();

  @Test
  void anInFlightDecisionNeverSeesAnotherOperationsResponse() throws Exception {
    RetryConfig config = RetryConfig.<ResponseSnapshot>custom().maxAttempts(3)
        .intervalBiFunction((Integer n, Either<Throwable, ResponseSnapshot> last) -> {
          seenStatuses.add(last.isRight() ? last.get().status() : -1);
          return last.isRight() ? last.get().header("X-Wait-Ms").map(Long::parseLong).orElse(50L) : 10L;
        })
        .build();
    Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(config);
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(new InMemoryJournal()).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(Runnable::run)
        .retryPolicy(r4j.retryPolicy()).classifier(r4j.classifier())
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();

    Operation first = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    executor.execute(first, new FakeHost(time, (k, n, now) -> Reply.status(201, Map.of("X-Wait-Ms", "4000"))));

    Operation second = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    executor.execute(second, new FakeHost(time, (k, n, now) -> n == 1 ? Reply.status(409) : Reply.status(201)));

    assertEquals(List.of(Duration.ofSeconds(1)), time.sleeperWaits(),
        "the wait after the second operation's 409; the interval function saw statuses " + seenStatuses);
  }
}
