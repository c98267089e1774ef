package dev.idem.core.resilience4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Classification;
import dev.idem.core.Classifier;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationState;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The adapter maps a response that resilience4j's {@code retryOnResult} accepts to TRANSIENT
 * (AMBIGUOUS only for a 2xx). The most common result predicate, "retry anything that is not a
 * success", then also turns a 303 See Other (how a server answers a POST it has processed:
 * Post/Redirect/Get) into TRANSIENT, although Idem's own table calls it AMBIGUOUS because the
 * effect may exist. After the attempts run out the operation ends FAILED while the server holds
 * the effect: the guarantee (never FAILED while the effect may exist) is broken by mapping a
 * user's RetryConfig onto Idem.
 */
class RetryOnResultRedirectAfterEffectTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final Operation op = Operation.builder("create-order", Requests.order("{\"amount\":5}")).build();

  @Test
  void aRetriedRedirectThatFollowsTheEffectNeverEndsFailed() throws Exception {
    RetryConfig config = RetryConfig.<ResponseSnapshot>custom().maxAttempts(3).waitDuration(Duration.ofMillis(10))
        .retryOnResult(r -> !r.isSuccessful()).build();
    Resilience4jRetryAdapter r4j = Resilience4jRetryAdapter.from(config);
    AtomicInteger effects = new AtomicInteger();
    // The server processes the POST on the first attempt and answers every attempt with this key
    // by redirecting to the created resource.
    FakeHost host = new FakeHost(time, (key, n, now) -> {
      if (n == 1) {
        effects.incrementAndGet();
      }
      return Reply.status(303, Map.of("Location", "/orders/42"));
    });
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .retryPolicy(r4j.retryPolicy()).classifier(r4j.classifier())
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();

    OperationException e = assertThrows(OperationException.class, () -> idem.execute(op, host));

    assertEquals(1, effects.get(), "the server took the effect once");
    assertEquals(3, host.attempts(op.key()));
    assertEquals(Classification.AMBIGUOUS,
        Classifier.defaults().classify(FakeHost.response(303, Map.of())).orElseThrow().classification(),
        "Idem's own table: a 303 may follow the effect");
    assertEquals(OperationState.UNCERTAIN, journal.find(op.id()).orElseThrow().state(),
        "the server holds the effect (303 after processing the POST), yet the adapted retryOnResult made every"
            + " 303 TRANSIENT, so the operation ended " + e.getClass().getSimpleName() + ": "
            + journal.find(op.id()).orElseThrow().reason());
  }
}
