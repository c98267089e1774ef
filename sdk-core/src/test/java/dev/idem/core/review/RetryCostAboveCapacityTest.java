package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/**
 * {@code RetryBudget.tokenBucket(capacity, retryCost, ...)} validates each number alone
 * (capacity >= 1, retryCost >= 1) but accepts a retry that costs more than the bucket can ever
 * hold. The budget then denies every retry to every host forever, whatever the refill: an
 * operation whose first attempt got a 503 stays PENDING for good (each execution and each resume
 * is a retry, and each is denied), until its age limit ends it. A configuration that can never
 * retry should be refused when it is built, not found out in production.
 */
class RetryCostAboveCapacityTest {

  @Test
  void aBudgetTheFactoryAcceptedLetsARetryThroughEventually() throws Exception {
    // The budget refills on the executor's own virtual clock (read through the holder once built).
    Harness[] holder = new Harness[1];
    Clock clock = new Clock() {
      @Override
      public ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(ZoneId zone) {
        return this;
      }

      @Override
      public Instant instant() {
        return holder[0] == null ? VirtualTime.DEFAULT_START : holder[0].time.now();
      }
    };
    RetryBudget budget;
    try {
      budget = RetryBudget.tokenBucket(4, 5, 1, 1.0, clock);
    } catch (IllegalArgumentException refused) {
      return; // refused up front: fine
    }
    RetryBudget accepted = budget;
    holder[0] = new Harness(Harness.POLICY, b -> b.retryBudget(accepted));
    Harness g = holder[0];
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = g.transport(op).then(status(503)).otherwise(status(201));

    for (int i = 0; i < 5; i++) {
      try {
        g.executor.execute(op, t);
      } catch (Exception e) {
        // PENDING: the retry was denied
      }
      g.time.advance(Duration.ofHours(1));
    }

    OperationRecord r = g.record(op);
    assertEquals(OperationState.SUCCEEDED, r.state(), "tokenBucket(capacity 4, retryCost 5) was accepted; after 5"
        + " executions over 5 hours of refill the retry was still never sent (" + t.count() + " attempt(s)), the"
        + " operation is " + r.state() + ": " + r.reason());
  }
}
