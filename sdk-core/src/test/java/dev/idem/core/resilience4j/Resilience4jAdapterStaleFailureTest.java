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
 * The adapter handed its interval function the exception of an attempt that got no response
 * through a per-thread note its classifier made. With the app's own classifier before the
 * adapter's (docs/client.md: "put your special cases first"), an attempt that classifier judges
 * never reaches the adapter's, so its delay read whatever an earlier attempt on the thread had
 * noted and not used: the last attempt of another operation, which stopped without a delay
 * (refused by the config's ignoreExceptions, or its attempts ran out). The function must get the
 * attempt's own exception, which now comes with the policy's decision, never another operation's.
 */
class Resilience4jAdapterStaleFailureTest {
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

  private RetryConfig.Builder<ResponseSnapshot> config() {
    return RetryConfig.<ResponseSnapshot>custom().intervalBiFunction((Integer n, Either<Throwable, ResponseSnapshot> last) -> {
      if (last.isLeft()) {
        seenByIntervals.add(last.getLeft());
      }
      return 10L;
    });
  }

  private IdempotentExecutor executor(Resilience4jRetryAdapter r4j, Classifier classifier) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).retryPolicy(r4j.retryPolicy())
        .classifier(classifier).circuitBreaker(CircuitBreakerSettings.disabled())
        .retryBudget(RetryBudget.unlimited()).build();
  }

  @Test
  void anAttemptTheConfigRefusesLeavesNothingForTheNextOperationsDelay() throws Exception {
    Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(config().maxAttempts(3)
        .ignoreExceptions(SocketTimeoutException.class).build());
    assertNextOperationsDelayDoesNotSee(r4j, REFUSED_IS_TRANSIENT.orElse(r4j.classifier()), 1);
  }

  @Test
  void anOperationWhoseAttemptsRanOutLeavesNothingForTheNextOperationsDelay() throws Exception {
    Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(config().maxAttempts(2).build());
    assertNextOperationsDelayDoesNotSee(r4j, REFUSED_IS_TRANSIENT.orElse(r4j.classifier()), 2);
  }

  @Test
  void anAttemptTheNextClassifierRefusesLeavesNothingForTheNextOperationsDelay() throws Exception {
    Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(config().maxAttempts(3).build());
    Classifier timeoutIsFinal = new Classifier() {
      @Override
      public Optional<Verdict> classify(ResponseSnapshot response) {
        return Classifier.defaults().classify(response);
      }

      @Override
      public Optional<Verdict> classify(IOException failure) {
        return failure instanceof SocketTimeoutException ? Optional.of(Verdict.permanent("no retry after a timeout"))
            : Classifier.defaults().classify(failure);
      }
    };
    assertNextOperationsDelayDoesNotSee(r4j, REFUSED_IS_TRANSIENT.orElse(r4j.classifier(timeoutIsFinal)), 1);
  }

  /**
   * Runs an operation that times out on every attempt (judged by the adapter, ending UNCERTAIN
   * after {@code timedOutAttempts}), then, on the same thread, one refused once (judged by the
   * app's classifier) and then answered.
   */
  private void assertNextOperationsDelayDoesNotSee(Resilience4jRetryAdapter r4j, Classifier classifier,
      int timedOutAttempts) throws Exception {
    IdempotentExecutor executor = executor(r4j, classifier);
    Operation first = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    Operation second = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    List<SocketTimeoutException> firstsFailures = new ArrayList<>();
    FakeHost timingOut = new FakeHost(time, (k, n, now) -> {
      SocketTimeoutException e = new SocketTimeoutException("first operation's attempt " + n + " timed out");
      firstsFailures.add(e);
      return Reply.fail(e);
    });
    assertThrows(OperationUncertainException.class, () -> executor.execute(first, timingOut));
    assertEquals(timedOutAttempts, timingOut.attempts(first.key()));
    List<Throwable> seenForFirst = List.copyOf(seenByIntervals);
    seenByIntervals.clear();

    FakeHost refusedOnce = new FakeHost(time, (k, n, now) -> n == 1 ? Reply.fail(new ConnectException("refused"))
        : Reply.status(201));
    Outcome outcome = executor.execute(second, refusedOnce);

    assertEquals(2, outcome.attempts().size(), "the refused attempt was retried");
    assertEquals(1, seenByIntervals.size(), "one delay, for the refused attempt: " + seenByIntervals);
    Throwable seen = seenByIntervals.get(0);
    assertTrue(firstsFailures.stream().noneMatch(e -> e == seen),
        "the second operation's delay was handed the first operation's exception: " + seen);
    assertTrue(seen instanceof ConnectException && seen.getMessage().equals("refused"),
        "the app's classifier judged the attempt; its delay still gets the attempt's own exception: " + seen);
    assertEquals(firstsFailures.subList(0, timedOutAttempts - 1), seenForFirst,
        "the first operation's own delays got its own exceptions");
  }
}
