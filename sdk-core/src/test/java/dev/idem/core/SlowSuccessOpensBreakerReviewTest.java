package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review: CircuitBreakerSettings documents that the breaker counts as failures only requests that
 * never reached the host and 502/503/504, and every 2xx as a success ("opens when at least 50% of
 * the last 20 counted attempts failed"). HostGuard builds the resilience4j breaker without setting
 * the slow-call thresholds, so resilience4j's defaults apply: a call longer than 60 s is "slow", and
 * a window of 100% slow calls opens the breaker. A host whose keyed POSTs all succeed but take a
 * little over a minute (a slow payment or report API, with read timeouts raised to match) gets its
 * breaker opened by successes, and the next operation is not sent at all.
 */
class SlowSuccessOpensBreakerReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final List<IdemEvent> events = Collections.synchronizedList(new ArrayList<>());

  @Test
  void successesThatTakeOverAMinuteNeverOpenTheBreaker() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .retryBudget(RetryBudget.unlimited()).listener(events::add)
        // Default breaker settings. A 5 s deadline: the call cannot wait out a 10 s open period.
        .retryPolicy(RetryPolicy.builder().deadline(Duration.ofSeconds(5)).build())
        .build();
    // Every attempt succeeds, after 61 s on the server.
    FakeHost slowButHealthy = new FakeHost(time, (key, n, now) -> {
      time.advance(Duration.ofSeconds(61));
      return Reply.status(201);
    });
    for (int i = 0; i < 10; i++) {
      Operation op = Operation.builder("create-report", Requests.order("{\"n\":" + i + "}")).build();
      assertEquals(1, idem.execute(op, slowButHealthy).attempts().size());
    }

    Operation next = Operation.builder("create-report", Requests.order("{\"n\":10}")).build();
    assertDoesNotThrow(() -> idem.execute(next, slowButHealthy),
        "a host that answered 201 to every request must not be refused by its breaker");
    assertEquals(1, slowButHealthy.attempts(next.key()));
    assertEquals(List.of(), events.stream().filter(IdemEvent.BreakerStateChanged.class::isInstance).toList(),
        "ten successes must not change the breaker's state");
  }
}
