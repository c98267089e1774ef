package dev.idem.core.resilience4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classifier;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.Outcome;
import dev.idem.core.RetryPolicy;
import dev.idem.core.Verdict;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import io.github.resilience4j.core.functions.Either;
import io.github.resilience4j.retry.RetryConfig;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * d40df8ba promises (Resilience4jRetryAdapter's class comment) that the adapter's interval
 * function gets "never the exception of an earlier attempt on that thread (one of another
 * operation, which stopped without a delay)". The note its classifier keeps for a non-PERMANENT
 * verdict is dropped only by the adapter's own delay function ({@code Intervals.delay} or
 * {@code UnaskedDelay.notAsked}). An operation run with its own policy
 * ({@code Operation.Builder.policy}, "used instead of the executor's default") is still judged by
 * the executor's classifier: the adapter's classifier notes its exception, and its policy, which is
 * not the adapter's, never drops it. The next operation on that thread that uses the adapter's
 * policy, whose attempt the app's classifier (placed first, as docs/client.md recommends for special
 * cases) judged, hands its interval function that other operation's exception.
 *
 * <p>Why it matters: the interval function picks the wait from the exception (the point of
 * {@code intervalBiFunction}): the second operation's retry waits as if it had failed the way an
 * unrelated operation did (here a timeout instead of a refused connection).
 */
class RvRtoday4AdapterNoteLeftByOtherPolicyTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final List<Throwable> seenByIntervals = new ArrayList<>();

  /** The app's special case, first: a refused connection is retried, whatever resilience4j says. */
  private static final Classifier REFUSED_IS_TRANSIENT = new Classifier() {
    @Override
    public Optional<Verdict> classify(ResponseSnapshot response) {
      return Optional.empty();
    }

    @Override
    public Optional<Verdict> classify(IOException failure) {
      return failure instanceof ConnectException ? Optional.of(Verdict.transientFailure("our gateway refused"))
          : Optional.empty();
    }
  };

  @Test
  void anOperationWithItsOwnPolicyLeavesNoNoteForTheNextOperationsDelay() throws Exception {
    Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(RetryConfig.<ResponseSnapshot>custom().maxAttempts(3)
        .intervalBiFunction((Integer n, Either<Throwable, ResponseSnapshot> last) -> {
          if (last.isLeft()) {
            seenByIntervals.add(last.getLeft());
          }
          return 10L;
        }).build());
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(Runnable::run)
        .retryPolicy(r4j.retryPolicy()).classifier(REFUSED_IS_TRANSIENT.orElse(r4j.classifier()))
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();

    // One operation with a policy of its own: a single attempt, no retry.
    Operation oneShot = Operation.builder("notify", Requests.order("{\"n\":1}"))
        .policy(RetryPolicy.builder().maxAttempts(1).build()).build();
    SocketTimeoutException oneShotsFailure = new SocketTimeoutException("the one-shot operation timed out");
    FakeHost timingOut = new FakeHost(time, (k, n, now) -> Reply.fail(oneShotsFailure));
    assertThrows(OperationUncertainException.class, () -> executor.execute(oneShot, timingOut));
    assertEquals(List.of(), seenByIntervals, "the adapter's delay function is not asked for it");

    // Then, on the same thread, an operation with the executor's (the adapter's) policy.
    Operation order = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    FakeHost refusedOnce = new FakeHost(time, (k, n, now) -> n == 1 ? Reply.fail(new ConnectException("refused"))
        : Reply.status(201));
    Outcome outcome = executor.execute(order, refusedOnce);

    assertEquals(2, outcome.attempts().size(), "the refused attempt was retried");
    assertEquals(1, seenByIntervals.size(), "one delay, for the refused attempt: " + seenByIntervals);
    Throwable seen = seenByIntervals.get(0);
    assertTrue(seen != oneShotsFailure,
        "the order's delay was handed the exception of another operation's attempt: " + seen);
    assertTrue(seen instanceof ConnectException && seen.getMessage().equals("refused"),
        "the app's classifier judged the attempt; its delay still gets the attempt's own exception: " + seen);
  }
}
